// Tests for ops/scale.cpp (x * c, c * x and x / c).
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/elementwise_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("scale: small exact case, forward and backward", "[scale]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({{1.0, -2.0}, {3.0, 0.5}}));
  Tensor y = scale(x, 0.5);
  CHECK(y.shape() == Shape{2, 2});
  CHECK(y.values() == std::vector<double>{0.5, -1.0, 1.5, 0.25});
  tape.backward(y, std::vector<double>{1, 2, 3, 4});
  CHECK(x.grad_values() == std::vector<double>{0.5, 1, 1.5, 2});
}

TEST_CASE("scale: the operators c * x, x * c and x / c", "[scale]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({2.0, -4.0}, DType::Float64);
  CHECK((3.0 * x).values() == std::vector<double>{6, -12});
  CHECK((x * 3.0).values() == std::vector<double>{6, -12});
  CHECK((x / 4.0).values() == std::vector<double>{0.5, -1});
}

TEST_CASE("scale: x / c divides, as torch does, rather than multiplying by 1/c", "[scale]") {
  Tape tape;
  TapeScope scope(tape);
  // The book's attn_scores / keys.shape[-1]**0.5 with d_k = 2. For x = 3 the float32 quotient
  // and the product with the rounded reciprocal differ in the last bit.
  const double c = std::sqrt(2.0);
  const float quotient = 3.0f / static_cast<float>(c);
  REQUIRE(quotient != 3.0f * static_cast<float>(1.0 / c));
  Tensor x = requires_grad(tensor({3.0}));
  Tensor y = x / c;
  CHECK(y.values() == std::vector<double>{quotient});
  tape.backward(y, std::vector<double>{3.0});  // the gradient is divided too: dX = dY / c
  CHECK(x.grad_values() == std::vector<double>{quotient});
}

TEST_CASE("scale: matches torch's float32 forward and backward", "[scale][goldens]") {
  testing::check_elementwise_goldens(
      "scale", [](const Tensor& a, const Tensor&, double c) { return scale(a, c); });
  testing::check_elementwise_goldens(
      "div_scalar", [](const Tensor& a, const Tensor&, double c) { return a / c; });
}

GRADCHECK_TEST_CASE("scale", "multiplying and dividing, ranks 0 to 4") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto times = gradcheck("scale", [](std::span<const Tensor> in) { return scale(in[0], -1.75); },
                           {random_input(shape, 1)});
    testing::require_gradcheck(times, "scale");
    auto divided =
        gradcheck("scale (divide)", [](std::span<const Tensor> in) { return in[0] / 0.3; },
                  {random_input(shape, 2)});
    testing::require_gradcheck(divided, "scale");
  }
}
