// Tests for ops/sign.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("sign: −1, 0, 1, sign(nan) = 0 and sign(−0) = +0 as torch 1.13", "[sign]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x =
      requires_grad(tensor({-2.5, 0.0, -0.0, 3.0, NAN, -INFINITY, INFINITY}, DType::Float32));
  Tensor y = sign(x);
  const std::vector<double> v = y.values();
  CHECK(v == std::vector<double>{-1.0, 0.0, 0.0, 1.0, 0.0, -1.0, 1.0});
  CHECK(!std::signbit(v[2]));
  // The gradient is zero everywhere, even for an infinite or nan dY (torch's zeros_like)
  tape.backward(y, std::vector<double>{2, 5, INFINITY, 3, NAN, 1, 1});
  CHECK(x.grad_values() == std::vector<double>(7, 0.0));
}

TEST_CASE("sign: grad() gives zeros, not an error, as torch", "[sign][grad]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({0.5, -1.5}, DType::Float64));
  CHECK(grad(sum(sign(x)), {x})[0].values() == std::vector<double>{0.0, 0.0});
  Tensor empty = requires_grad(zeros(Shape{0}, DType::Float64));
  CHECK(sign(empty).shape() == Shape{0});
}

TEST_CASE("sign: matches torch bit for bit, nan and ±inf included", "[sign][goldens]") {
  testing::check_unary_goldens(
      "sign", [](const Tensor& x) { return sign(x); }, 0);
}

GRADCHECK_TEST_CASE("sign", "zero gradient, ranks 0 to 4, away from 0") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report = gradcheck("sign", [](std::span<const Tensor> in) { return sign(in[0]) * in[0]; },
                            {testing::signed_away_from_zero(shape, 36)});
    testing::require_gradcheck(report, "sign");
  }
}
