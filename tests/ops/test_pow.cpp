// Tests for ops/pow.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/elementwise_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("pow: integer and root exponents, exact", "[pow]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({2.0, -3.0, 0.5});
  CHECK(pow(x, 2.0).values() == std::vector<double>{4, 9, 0.25});
  CHECK(pow(x, 3.0).values() == std::vector<double>{8, -27, 0.125});
  CHECK(pow(x, -1.0).values() == std::vector<double>{0.5, -1.0f / 3.0f, 2});
  CHECK(pow(x, -2.0).values() == std::vector<double>{0.25, 1.0f / 9.0f, 4});
  CHECK(pow(x, 0.0).values() == std::vector<double>{1, 1, 1});
  CHECK(pow(tensor({4.0, 0.25}), 0.5).values() == std::vector<double>{2, 0.5});
  CHECK(pow(tensor({4.0, 0.25}), -0.5).values() == std::vector<double>{0.5, 2});
  CHECK(pow(tensor({16.0}), 1.5).values() == std::vector<double>{64});
}

TEST_CASE("pow: backward is p·xᵖ⁻¹", "[pow]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({2.0, -1.0, 4.0}));
  tape.backward(sum(pow(x, 3.0)));
  CHECK(x.grad_values() == std::vector<double>{12, 3, 48});
}

TEST_CASE("pow: a root's gradient, and zero gradient for exponent 0", "[pow]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({4.0, 16.0}));
  Tensor y = pow(x, 0.5) + pow(x, 0.0);
  tape.backward(sum(y));
  CHECK(x.grad_values() == std::vector<double>{0.25, 0.125});  // ½ x^-½, plus 0
}

TEST_CASE("pow: a non-integer power of a negative is nan, like torch", "[pow]") {
  Tape tape;
  TapeScope scope(tape);
  const std::vector<double> v = pow(tensor({-8.0, -2.0}), 1.0 / 3.0).values();
  CHECK(std::isnan(v[0]));
  CHECK(std::isnan(v[1]));
  CHECK(pow(tensor({-2.0}), 4.0).values() == std::vector<double>{16});  // integer: fine
}

TEST_CASE("pow: matches torch's float32 forward and backward", "[pow][goldens]") {
  testing::check_elementwise_goldens(
      "pow", [](const Tensor& a, const Tensor&, double c) { return pow(a, c); });
}

GRADCHECK_TEST_CASE("pow", "several exponents, ranks 0 to 4") {
  for (double p : {2.0, 3.0, -1.0, -2.0, 0.5, -0.5, 1.7, 0.0}) {
    for (const Shape& shape : testing::unary_gradcheck_shapes()) {
      INFO("exponent " << p << ", shape " << shape.str());
      auto report = gradcheck("pow", [p](std::span<const Tensor> in) { return pow(in[0], p); },
                              {random_input(shape, 1, 0.3, 2.0)});
      testing::require_gradcheck(report, "pow");
    }
  }
}

GRADCHECK_TEST_CASE("pow", "integer exponents of negative inputs") {
  for (double p : {2.0, 3.0, 4.0, -1.0}) {
    auto report = gradcheck("pow", [p](std::span<const Tensor> in) { return pow(in[0], p); },
                            {random_input(Shape{2, 3}, 3, -2.0, -0.3)});
    testing::require_gradcheck(report, "pow");
  }
}
