// Tests for ops/leaky_relu.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/activation_cases.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("leaky_relu: values, NaN and torch's gradient at the kink", "[leaky_relu]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({-2.0, 0.0, 3.0, NAN}, DType::Float64));
  Tensor y = leaky_relu(x, 0.25);
  const std::vector<double> v = y.values();
  CHECK(v[0] == -0.5);
  CHECK(v[1] == 0.0);
  CHECK(v[2] == 3.0);
  CHECK(std::isnan(v[3]));
  tape.backward(y, std::vector<double>{1, 4, 2, 1});
  const std::vector<double> g = x.grad_values();
  CHECK(g[0] == 0.25);
  CHECK(g[1] == 1.0);  // at 0 the negative slope's branch, as torch
  CHECK(g[2] == 2.0);
}

TEST_CASE("leaky_relu: matches torch's forward and backward, float32 and float64",
          "[leaky_relu][goldens]") {
  for (const auto& [name, slope] : {std::pair<const char*, double>{"leaky_relu", 0.01},
                                    std::pair<const char*, double>{"leaky_relu_0.2", 0.2}}) {
    INFO(name);
    const int64_t equal = testing::check_activation_goldens(
        name, [slope](const Tensor& x) { return leaky_relu(x, slope); }, 0, "activations2.txt");
    CHECK(equal == 240);  // bit for bit (every y and dx element, both dtypes)
  }
}

TEST_CASE("leaky_relu: a slope that is not finite or overflows float32 is an Error",
          "[leaky_relu]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros(Shape{2}, DType::Float32);
  CHECK_THROWS_WITH(leaky_relu(x, NAN), Catch::Contains("leaky_relu") && Catch::Contains("[2]") &&
                                            Catch::Contains("negative_slope") &&
                                            Catch::Contains("finite"));
  CHECK_THROWS_WITH(leaky_relu(x, 1e300), Catch::Contains("overflows float32"));
}

GRADCHECK_TEST_CASE("leaky_relu", "ranks 0 to 4") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report =
        gradcheck("leaky_relu", [](std::span<const Tensor> in) { return leaky_relu(in[0], 0.1); },
                  {random_input(shape, 3, -2.0, 2.0)});
    testing::require_gradcheck(report, "leaky_relu");
  }
}
