// Heap allocations of whole training steps, counted by a real malloc counter (alloc_counter.h):
// the README's claim that from the second step on a step allocates nothing from the heap.
// New models (the GPT modules) get a case here: build, warm up, then
// CHECK(allocations_per_steps(step, 2, N) == 0).
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/nn/attention.h>
#include <tapegrad/nn/generate.h>
#include <tapegrad/nn/gpt.h>
#include <tapegrad/nn/layers.h>
#include <tapegrad/ops/ops.h>
#include <tapegrad/optim/optim.h>
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

namespace {

// The heap allocations between each token and the next of one nn::generate call, counted from
// the on_token callback (the counts go into storage reserved before the call).
struct DecodeAllocations {
  Ids ids;
  std::vector<uint64_t> per_step;  // per_step[i]: allocations between token i and token i + 1
};

DecodeAllocations decode_allocations(const nn::GPTModel& model, const Ids& prompt,
                                     nn::GenerateOptions options) {
  std::vector<uint64_t> at_token;
  at_token.reserve(static_cast<size_t>(options.max_new_tokens));
  options.on_token = [&at_token](const Ids&) { at_token.push_back(heap_allocations()); };
  DecodeAllocations out;
  out.ids = nn::generate(model, prompt, options);
  for (size_t i = 1; i < at_token.size(); ++i)
    out.per_step.push_back(at_token[i] - at_token[i - 1]);
  return out;
}

}  // namespace

TEST_CASE("nn::generate decode steps allocate nothing after the first with the KV cache",
          "[alloc][generate]") {
  // A tiny GPT: vocabulary 50, context 32, 8 dims, 2 heads, 2 layers.
  manual_seed(123);
  nn::GPTModel model(nn::GPTConfig{50, 32, 8, 2, 2, 0.1, false});
  model.eval();
  const Ids prompt = Ids::from_rows({{6, 1, 17, 44}, {3, 9, 28, 0}});  // [2, 4]
  struct Mode {
    const char* name;
    double temperature;
    std::optional<int64_t> top_k;
  };
  for (const Mode& mode :
       {Mode{"greedy", 0.0, std::nullopt}, Mode{"top-k 5", 0.0, 5},
        Mode{"temperature 0.8", 0.8, std::nullopt}, Mode{"top-k 5 and temperature 0.8", 0.8, 5}}) {
    INFO("sampling " << mode.name);
    nn::GenerateOptions options;
    options.max_new_tokens = 20;  // 4 + 20 tokens fit the context: every step after the first
                                  // is a one-token decode step
    options.temperature = mode.temperature;
    options.top_k = mode.top_k;
    Generator generator(42);
    options.generator = &generator;
    const DecodeAllocations cached = decode_allocations(model, prompt, options);
    REQUIRE(cached.per_step.size() == 19);
    // The first decode step may still grow the tape's arena and the kernels' scratch rows.
    for (size_t i = 1; i < cached.per_step.size(); ++i) {
      INFO("decode step " << i + 1);
      CHECK(cached.per_step[i] == 0);
    }
    // The steps measured made the tokens the uncached loop makes (same seed, same draws).
    Generator uncached_generator(42);
    options.generator = &uncached_generator;
    options.use_cache = false;
    const Ids uncached = nn::generate(model, prompt, options);
    CHECK(std::vector<int64_t>(uncached.values().begin(), uncached.values().end()) ==
          std::vector<int64_t>(cached.ids.values().begin(), cached.ids.values().end()));
  }
}

TEST_CASE("nn::generate with bf16 weights: decode steps allocate nothing after the first",
          "[alloc][generate][bf16]") {
  manual_seed(123);
  nn::GPTModel model(nn::GPTConfig{97, 32, 48, 3, 2, 0.0, true});
  model.eval();
  nn::use_bf16_weights(model);
  // One row (the one-row kernel) and two (the many-row path, its per-thread buffer).
  for (const Ids& prompt : {Ids::from_rows({{6, 1, 17, 44}}), Ids::from_rows({{6, 1}, {3, 9}})}) {
    INFO("batch " << prompt.size(0));
    nn::GenerateOptions options;
    options.max_new_tokens = 20;
    const DecodeAllocations cached = decode_allocations(model, prompt, options);
    REQUIRE(cached.per_step.size() == 19);
    for (size_t i = 1; i < cached.per_step.size(); ++i) {
      INFO("decode step " << i + 1);
      CHECK(cached.per_step[i] == 0);
    }
  }
}

TEST_CASE("nn::generate_text_simple allocates as much for 20 new tokens as for 10",
          "[alloc][generate]") {
  // No callback here: ten more decode steps must add no allocation to the whole call.
  manual_seed(123);
  nn::GPTModel model(nn::GPTConfig{50, 32, 8, 2, 2, 0.1, false});
  model.eval();
  const Ids prompt = Ids::from_rows({{6, 1, 17, 44}});  // [1, 4]
  auto allocations = [&](int64_t new_tokens) {
    const uint64_t before = heap_allocations();
    const Ids out = nn::generate_text_simple(model, prompt, new_tokens, 32);
    const uint64_t made = heap_allocations() - before;
    CHECK(out.size(1) == 4 + new_tokens);
    return made;
  };
  allocations(20);  // warm-up: the kernels' thread-local scratch rows
  CHECK(allocations(20) == allocations(10));
}
