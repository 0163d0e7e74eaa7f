// Tests for ops/sqrt.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/elementwise_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("sqrt: small exact case, forward and backward", "[sqrt]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({4.0, 9.0, 0.25}));
  Tensor y = sqrt(x);
  CHECK(y.values() == std::vector<double>{2.0, 3.0, 0.5});
  tape.backward(y, std::vector<double>{1, 3, 1});  // dX = dY / (2√x)
  CHECK(x.grad_values() == std::vector<double>{0.25, 0.5, 1.0});
}

TEST_CASE("sqrt: of a negative is nan, the gradient at 0 is inf, like torch", "[sqrt]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK(std::isnan(sqrt(tensor({-1.0})).values()[0]));
  Tensor x = requires_grad(tensor({0.0, 1.0}));
  Tensor y = sqrt(x);
  CHECK(y.values() == std::vector<double>{0.0, 1.0});
  tape.backward(sum(y));
  CHECK(x.grad_values() == std::vector<double>{INFINITY, 0.5});
}

TEST_CASE("sqrt: matches torch's float32 forward and backward", "[sqrt][goldens]") {
  testing::check_elementwise_goldens(
      "sqrt", [](const Tensor& a, const Tensor&, double) { return sqrt(a); });
}

GRADCHECK_TEST_CASE("sqrt", "positive inputs, ranks 0 to 4") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report = gradcheck("sqrt", [](std::span<const Tensor> in) { return sqrt(in[0]); },
                            {random_input(shape, 1, 0.2, 3.0)});
    testing::require_gradcheck(report, "sqrt");
  }
}
