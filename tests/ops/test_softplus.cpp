// Tests for ops/softplus.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/activation_cases.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("softplus: values, the threshold and the gradient", "[softplus]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({0.0, 10.0, 10.5, -3.0}, DType::Float64));
  Tensor y = softplus(x, 2.0, 20.0);
  const std::vector<double> v = y.values();
  CHECK(v[0] == std::log1p(1.0) / 2.0);
  CHECK(v[1] == std::log1p(std::exp(20.0)) / 2.0);  // beta·x == threshold: not above it
  CHECK(v[2] == 10.5);                              // above: x itself
  CHECK(v[3] == std::log1p(std::exp(-6.0)) / 2.0);
  tape.backward(y, std::vector<double>{1, 1, 3, 1});
  const std::vector<double> g = x.grad_values();
  CHECK(g[0] == 0.5);
  CHECK(g[2] == 3.0);
  CHECK(g[3] == Approx(1.0 / (1.0 + std::exp(6.0))).epsilon(1e-15));
}

TEST_CASE("softplus: matches torch's forward and backward, float32 and float64",
          "[softplus][goldens]") {
  const int64_t equal = testing::check_activation_goldens(
      "softplus", [](const Tensor& x) { return softplus(x); }, 4, "activations2.txt");
  CHECK(equal > 0);
  const int64_t equal2 = testing::check_activation_goldens(
      "softplus_beta2_threshold10", [](const Tensor& x) { return softplus(x, 2.0, 10.0); }, 4,
      "activations2.txt");
  CHECK(equal2 > 0);
}

TEST_CASE("softplus: beta 0 or not finite, or a threshold not finite, is an Error", "[softplus]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros(Shape{3}, DType::Float32);
  CHECK_THROWS_WITH(softplus(x, 0.0), Catch::Contains("softplus") && Catch::Contains("[3]") &&
                                          Catch::Contains("beta 0 must not be 0"));
  CHECK_THROWS_WITH(softplus(x, 1e-50), Catch::Contains("must not be 0"));  // 0 in float32
  CHECK_THROWS_WITH(softplus(x, NAN), Catch::Contains("beta nan must be finite"));
  CHECK_THROWS_WITH(softplus(x, 1.0, -INFINITY), Catch::Contains("threshold"));
}

GRADCHECK_TEST_CASE("softplus", "ranks 0 to 4") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report =
        gradcheck("softplus", [](std::span<const Tensor> in) { return softplus(in[0], 1.5, 20.0); },
                  {random_input(shape, 3, -3.0, 3.0)});
    testing::require_gradcheck(report, "softplus");
  }
}
