// Tests for ops/gelu.cpp.
#include <cmath>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/activation_cases.h"
#include "tests/ops/fused_compare.h"
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

TEST_CASE("gelu: small exact cases (tanh)", "[gelu]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = gelu(tensor({0.0, 10.0, -10.0, 1.0}, DType::Float64), "tanh");
  const std::vector<double> v = y.values();
  CHECK(v[0] == 0.0);
  CHECK(v[1] == 10.0);  // tanh(u) rounds to 1
  CHECK(std::abs(v[2]) < 1e-40);
  // The book's formula at x = 1, written out.
  const double u = std::sqrt(2.0 / M_PI) * (1.0 + 0.044715);
  CHECK(v[3] == Approx(0.5 * (1.0 + std::tanh(u))).epsilon(1e-15));
  CHECK(gelu(tensor({1.0}), "tanh").values()[0] == Approx(v[3]).epsilon(1e-7));  // float32
}

TEST_CASE("gelu: forward and gradient match PyTorch (approximate='tanh')", "[gelu][golden]") {
  const testing::GoldenFile golden("reductions", "gelu.txt");
  Tape tape;
  TapeScope scope(tape);
  Tensor x = from_values(golden["x"].shape, golden["x"].values, DType::Float64, true);
  Tensor y = gelu(x, "tanh");
  testing::require_close(y.values(), golden["y"], 1e-12, "y");
  tape.backward(y, golden["dy"].values);
  testing::require_close(x.grad_values(), golden["dx"], 1e-12, "dx");
}

GRADCHECK_TEST_CASE("gelu", "ranks 0-4") {
  for (Shape shape : {Shape{}, Shape{7}, Shape{3, 4}, Shape{2, 3, 2}, Shape{2, 1, 3, 2}}) {
    auto report = gradcheck("gelu", [](std::span<const Tensor> in) { return gelu(in[0], "tanh"); },
                            {random_input(shape, 41, -4.0, 4.0)});
    testing::require_gradcheck(report, "gelu");
  }
}

TEST_CASE("gelu: approximate='none' is x·Φ(x), by erf", "[gelu]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({0.0, 1.0, -2.0, 40.0, -40.0}, DType::Float64);
  const std::vector<double> v = gelu(x).values();
  CHECK(v[0] == 0.0);
  CHECK(v[1] == Approx(0.5 * (1.0 + std::erf(1.0 / std::sqrt(2.0)))).epsilon(1e-15));
  CHECK(v[2] == Approx(-2.0 * 0.5 * std::erfc(2.0 / std::sqrt(2.0))).epsilon(1e-14));
  CHECK(v[3] == 40.0);
  CHECK(v[4] == 0.0);  // −40·½(1 + erf(−40/√2)) = −40·0, as torch
  CHECK(gelu(x, "none").values() == v);
}

TEST_CASE("gelu: approximate='none' matches torch's forward and backward", "[gelu][goldens]") {
  // The C library's erf where torch's float32 kernel has its own: a few float32 ulps.
  const int64_t equal = testing::check_activation_goldens(
      "gelu_none", [](const Tensor& x) { return gelu(x); }, 4, "activations2.txt");
  CHECK(equal > 0);
}

GRADCHECK_TEST_CASE("gelu_erf", "ranks 0-4") {
  for (Shape shape : {Shape{}, Shape{7}, Shape{3, 4}, Shape{2, 1, 3, 2}}) {
    auto report = gradcheck("gelu_erf", [](std::span<const Tensor> in) { return gelu(in[0]); },
                            {random_input(shape, 42, -4.0, 4.0)});
    testing::require_gradcheck(report, "gelu_erf");
  }
}

TEST_CASE("gelu: an unknown approximation is an Error naming the option", "[gelu][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 3});
  CHECK_THROWS_WITH(gelu(x, "erf"), Catch::Contains("gelu") &&
                                        Catch::Contains("approximate must be") &&
                                        Catch::Contains("\"erf\"") && Catch::Contains("[2, 3]"));
  CHECK(tape.size() == 1);  // nothing recorded beyond the input
}

TEST_CASE("gelu: the same bits with 1 and 2 threads, forward and backward", "[gelu][threads]") {
  // 300k elements (with a ragged end): enough work for gelu to split over two threads.
  const Shape shape{3, 100003};
  const auto x = random_input(shape, 31, -5.0, 5.0);
  const auto g = random_input(shape, 32);
  auto run = [&] {
    return testing::run_forward_backward(
        [](std::span<const Tensor> in) { return gelu(in[0], "tanh"); }, {x}, DType::Float32,
        g.values);
  };
  const auto [one, two] = testing::at_1_and_2_threads(run);
  CHECK(one.value == two.value);
  CHECK(one.grads == two.grads);
}
