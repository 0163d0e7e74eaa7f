// Heap allocations of whole training steps, counted by a real malloc counter (alloc_counter.h):
// the README's claim that from the second step on a step allocates nothing from the heap.
// New models (the GPT modules) get a case here: build, warm up, then
// CHECK(allocations_per_steps(step, 2, N) == 0).
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "graph/factory.h"
#include "graph/parameter.h"
#include "graph/random.h"
#include "graph/tape.h"
#include "nn/attention.h"
#include "ops/ops.h"
#include "optim/optim.h"
#include "tests/alloc/alloc_counter.h"

using namespace tapegrad;
using testing::allocations_per_steps;
using testing::heap_allocations;

namespace {
// Kept in a volatile so the compiler cannot pair and remove the allocation below.
void* volatile g_sink = nullptr;
}  // namespace

TEST_CASE("the counter sees malloc, operator new and std::vector", "[alloc]") {
  uint64_t before = heap_allocations();
  g_sink = std::malloc(16);
  std::free(g_sink);
  CHECK(heap_allocations() - before == 1);

  before = heap_allocations();
  g_sink = new int(3);
  delete static_cast<int*>(g_sink);
  CHECK(heap_allocations() - before == 1);

  before = heap_allocations();
  {
    std::vector<double> v(100);
    g_sink = v.data();
  }
  CHECK(heap_allocations() - before == 1);
}

TEST_CASE("Tensor::item reads the value without allocating, values() allocates", "[alloc]") {
  Tape tape;
  TapeScope scope(tape);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Tensor loss = sum(from_values({2}, std::vector<double>{0.25, 0.5}, dtype));
    uint64_t before = heap_allocations();
    const double value = loss.item();
    const uint64_t item_allocations = heap_allocations() - before;
    CHECK(value == 0.75);
    CHECK(item_allocations == 0);
    before = heap_allocations();
    const std::vector<double> values = loss.values();
    const uint64_t values_allocations = heap_allocations() - before;
    CHECK(values == std::vector<double>{0.75});
    CHECK(values_allocations == 1);  // the counter would see an item() built on values()
  }
}

TEST_CASE("the README training loop allocates nothing per step after the first", "[alloc]") {
  // The loop of README.md (readme-loop-begin), step for step.
  manual_seed(123);
  Parameter w_true = Parameter::from_values({3, 2}, {0.5, -1.0, 2.0, 0.25, -0.75, 1.5});
  w_true.set_requires_grad(false);
  Parameter w({3, 2}, DType::Float32, "W");
  SGD optimizer({w}, /*lr=*/0.5);
  Tape tape;
  TapeScope scope(tape);
  double loss_value = 0.0;
  auto step = [&] {
    tape.reset();
    Tensor x = rand({16, 3});                                 // [16, 3]
    Tensor loss = mse_loss(matmul(x, w), matmul(x, w_true));  // []
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    loss_value = loss.item();
  };
  const uint64_t allocations = allocations_per_steps(step, /*warmup=*/2, /*measured=*/50);
  CHECK(allocations == 0);
  CHECK(loss_value < 0.1);  // the steps measured did train
}

TEST_CASE("nn::MultiHeadAttention training steps allocate nothing after the first", "[alloc]") {
  for (const char* optimizer_name : {"SGD", "AdamW"}) {
    INFO("optimizer " << optimizer_name);
    Generator generator(7);
    // d_in 8, d_out 8, context 6, dropout 0.1, 2 heads, qkv bias: every op of the module.
    nn::MultiHeadAttention mha(8, 8, 6, 0.1, 2, true, DType::Float32, generator);
    mha.train();
    std::unique_ptr<Optimizer> optimizer;
    if (std::string(optimizer_name) == "SGD") {
      optimizer = std::make_unique<SGD>(mha.parameters(), SGDOptions{.lr = 0.05, .momentum = 0.9});
    } else {
      optimizer = std::make_unique<AdamW>(mha.parameters(), AdamWOptions{.lr = 1e-2});
    }
    Tape tape;
    TapeScope scope(tape);
    double first_loss = -1.0, loss_value = 0.0;
    auto step = [&] {
      tape.reset();
      Tensor x = rand({2, 6, 8}, DType::Float32, generator);       // [B, T, d_in]
      Tensor target = rand({2, 6, 8}, DType::Float32, generator);  // [B, T, d_out]
      Tensor loss = mse_loss(mha(x), target);                      // []
      optimizer->zero_grad();
      loss.backward();
      optimizer->step();
      loss_value = loss.item();
      if (first_loss < 0) first_loss = loss_value;
    };
    const uint64_t allocations = allocations_per_steps(step, /*warmup=*/2, /*measured=*/20);
    CHECK(allocations == 0);
    CHECK(loss_value < first_loss);  // the steps measured did train
  }
}
