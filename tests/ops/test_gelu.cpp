// Tests for ops/gelu.cpp.
#include <cmath>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/fused_compare.h"
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

TEST_CASE("gelu: small exact cases", "[gelu]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = gelu(tensor({0.0, 10.0, -10.0, 1.0}, DType::Float64));
  const std::vector<double> v = y.values();
  CHECK(v[0] == 0.0);
  CHECK(v[1] == 10.0);  // tanh(u) rounds to 1
  CHECK(std::abs(v[2]) < 1e-40);
  // The book's formula at x = 1, written out.
  const double u = std::sqrt(2.0 / M_PI) * (1.0 + 0.044715);
  CHECK(v[3] == Approx(0.5 * (1.0 + std::tanh(u))).epsilon(1e-15));
  CHECK(gelu(tensor({1.0})).values()[0] == Approx(v[3]).epsilon(1e-7));  // float32
}

TEST_CASE("gelu: forward and gradient match PyTorch (approximate='tanh')", "[gelu][golden]") {
  const testing::GoldenFile golden("reductions", "gelu.txt");
  Tape tape;
  TapeScope scope(tape);
  Tensor x = from_values(golden["x"].shape, golden["x"].values, DType::Float64, true);
  Tensor y = gelu(x);
  testing::require_close(y.values(), golden["y"], 1e-12, "y");
  tape.backward(y, golden["dy"].values);
  testing::require_close(x.grad_values(), golden["dx"], 1e-12, "dx");
}

GRADCHECK_TEST_CASE("gelu", "ranks 0-4") {
  for (Shape shape : {Shape{}, Shape{7}, Shape{3, 4}, Shape{2, 3, 2}, Shape{2, 1, 3, 2}}) {
    auto report = gradcheck("gelu", [](std::span<const Tensor> in) { return gelu(in[0]); },
                            {random_input(shape, 41, -4.0, 4.0)});
    testing::require_gradcheck(report, "gelu");
  }
}

TEST_CASE("gelu: the same bits with 1 and 2 threads, forward and backward", "[gelu][threads]") {
  // 300k elements (with a ragged end): enough work for gelu to split over two threads.
  const Shape shape{3, 100003};
  const auto x = random_input(shape, 31, -5.0, 5.0);
  const auto g = random_input(shape, 32);
  auto run = [&] {
    return testing::run_forward_backward([](std::span<const Tensor> in) { return gelu(in[0]); },
                                         {x}, DType::Float32, g.values);
  };
  const auto [one, two] = testing::at_1_and_2_threads(run);
  CHECK(one.value == two.value);
  CHECK(one.grads == two.grads);
}
