// Tests for ops/reciprocal.cpp and the scalar-on-the-left operators (1.0 + x, 2.0 - x, 10.0 / x).
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/elementwise_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("reciprocal: small exact case, forward and backward", "[reciprocal]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({2.0, -4.0, 0.5}));
  Tensor y = reciprocal(x);
  CHECK(y.values() == std::vector<double>{0.5, -0.25, 2.0});
  tape.backward(y, std::vector<double>{1, 2, 3});
  // −dY·Y²
  CHECK(x.grad_values() == std::vector<double>{-0.25, -0.125, -12.0});
}

TEST_CASE("scalar on the left: 1 + x, 2 - x, 10 / x, small exact cases", "[reciprocal]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({2.0, -4.0, 0.5}));
  CHECK((1.0 + x).values() == std::vector<double>{3.0, -3.0, 1.5});
  CHECK((2.0 - x).values() == std::vector<double>{0.0, 6.0, 1.5});
  Tensor q = 10.0 / x;
  CHECK(q.values() == std::vector<double>{5.0, -2.5, 20.0});
  tape.backward(q, std::vector<double>{1, 1, 1});
  CHECK(x.grad_values() == std::vector<double>{-2.5, -0.625, -40.0});  // −10 / x²
}

TEST_CASE("reciprocal and scalar-left operators match torch's float32 forward and backward",
          "[reciprocal][goldens]") {
  testing::check_elementwise_goldens(
      "reciprocal", [](const Tensor& a, const Tensor&, double) { return reciprocal(a); });
  testing::check_elementwise_goldens(
      "radd", [](const Tensor& a, const Tensor&, double c) { return c + a; });
  testing::check_elementwise_goldens(
      "rsub", [](const Tensor& a, const Tensor&, double c) { return c - a; });
  testing::check_elementwise_goldens(
      "rdiv", [](const Tensor& a, const Tensor&, double c) { return c / a; });
}

GRADCHECK_TEST_CASE("reciprocal", "ranks 0 to 4, and c - x, c / x") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    // Inputs away from zero: 1 / x is steep there.
    auto shifted = [](std::span<const Tensor> in) { return in[0] * in[0] + 0.5; };
    auto report =
        gradcheck("reciprocal", [&](std::span<const Tensor> in) { return reciprocal(shifted(in)); },
                  {random_input(shape, 1)});
    testing::require_gradcheck(report, "reciprocal");
    auto left =
        gradcheck("c - x, c / x",
                  [&](std::span<const Tensor> in) { return (2.0 - in[0]) * (3.0 / shifted(in)); },
                  {random_input(shape, 2)});
    testing::require_gradcheck(left, "reciprocal");
  }
}
