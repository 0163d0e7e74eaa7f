// Tests for ops/mish.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/activation_cases.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("mish: x * tanh(softplus(x)) at a few points, and no overflow", "[mish]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({-1.5, 0.0, 2.0, 1000.0}, DType::Float64);
  const std::vector<double> v = mish(x).values();
  CHECK(v[0] == Approx(-1.5 * std::tanh(std::log1p(std::exp(-1.5)))).epsilon(1e-15));
  CHECK(v[1] == 0.0);
  CHECK(v[2] == Approx(2.0 * std::tanh(std::log1p(std::exp(2.0)))).epsilon(1e-15));
  CHECK(v[3] == 1000.0);  // exp overflows to inf, tanh(inf) = 1
}

TEST_CASE("mish: matches torch's forward and backward, float32 and float64", "[mish][goldens]") {
  const int64_t equal = testing::check_activation_goldens(
      "mish", [](const Tensor& x) { return mish(x); }, 4, "activations2.txt");
  CHECK(equal > 0);
}

GRADCHECK_TEST_CASE("mish", "ranks 0 to 4") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report = gradcheck("mish", [](std::span<const Tensor> in) { return mish(in[0]); },
                            {random_input(shape, 3, -3.0, 3.0)});
    testing::require_gradcheck(report, "mish");
  }
}
