// Tests for ops/relu.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/activation_cases.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("relu: small case, NaN and the kink", "[relu]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({-1.0, 0.0, 2.5, NAN}, DType::Float64));
  Tensor y = relu(x);
  const std::vector<double> v = y.values();
  CHECK(v[0] == 0.0);
  CHECK(v[1] == 0.0);
  CHECK(v[2] == 2.5);
  CHECK(std::isnan(v[3]));
  tape.backward(y, std::vector<double>{1, 1, 3, 1});  // dX = dY where Y > 0 (torch: 0 at 0)
  const std::vector<double> g = x.grad_values();
  CHECK(g[0] == 0.0);
  CHECK(g[1] == 0.0);
  CHECK(g[2] == 3.0);
  CHECK(g[3] == 0.0);
}

TEST_CASE("relu: matches torch's forward and backward, float32 and float64", "[relu][goldens]") {
  const int64_t equal = testing::check_activation_goldens(
      "relu", [](const Tensor& x) { return relu(x); }, 0);
  CHECK(equal == 240);  // bit for bit (every y and dx element, both dtypes)
}

GRADCHECK_TEST_CASE("relu", "ranks 0 to 4") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report = gradcheck("relu", [](std::span<const Tensor> in) { return relu(in[0]); },
                            {random_input(shape, 3, -2.0, 2.0)});
    testing::require_gradcheck(report, "relu");
  }
}
