// Tests for ops/elu.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/activation_cases.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("elu: values and torch's gradient at the kink", "[elu]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({-1.0, 0.0, 2.0}, DType::Float64));
  Tensor y = elu(x, 2.0);
  const std::vector<double> v = y.values();
  CHECK(v[0] == (std::exp(-1.0) - 1.0) * 2.0);
  CHECK(v[1] == 0.0);
  CHECK(v[2] == 2.0);
  tape.backward(y, std::vector<double>{1, 1, 1});
  const std::vector<double> g = x.grad_values();
  CHECK(g[0] == 2.0 * std::exp(-1.0));
  CHECK(g[1] == 2.0);  // at 0 the exponential branch, alpha·e⁰, as torch
  CHECK(g[2] == 1.0);
}

TEST_CASE("elu: matches torch's forward and backward, float32 and float64", "[elu][goldens]") {
  for (const auto& [name, alpha] : {std::pair<const char*, double>{"elu", 1.0},
                                    std::pair<const char*, double>{"elu_alpha0.5", 0.5}}) {
    INFO(name);
    const int64_t equal = testing::check_activation_goldens(
        name, [alpha](const Tensor& x) { return elu(x, alpha); }, 4, "activations2.txt");
    CHECK(equal > 0);
  }
}

TEST_CASE("elu: an alpha that is not finite is an Error", "[elu]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros(Shape{2, 3}, DType::Float64);
  CHECK_THROWS_WITH(elu(x, INFINITY), Catch::Contains("elu") && Catch::Contains("[2, 3]") &&
                                          Catch::Contains("alpha inf must be finite"));
}

GRADCHECK_TEST_CASE("elu", "ranks 0 to 4") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report = gradcheck("elu", [](std::span<const Tensor> in) { return elu(in[0], 0.7); },
                            {random_input(shape, 3, -3.0, 3.0)});
    testing::require_gradcheck(report, "elu");
  }
}
