// Tests for ops/abs.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("abs: small case, the kink at 0, nan and ±inf", "[abs]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({-2.5, 0.0, -0.0, 3.0, NAN, -INFINITY}, DType::Float64));
  Tensor y = abs(x);
  const std::vector<double> v = y.values();
  CHECK(v[0] == 2.5);
  CHECK((v[1] == 0.0 && !std::signbit(v[1])));
  CHECK((v[2] == 0.0 && !std::signbit(v[2])));  // |−0| = +0
  CHECK(v[3] == 3.0);
  CHECK(std::isnan(v[4]));
  CHECK(v[5] == INFINITY);
  // dX = dY ⊙ sgn(X): 0 at ±0 (torch's subgradient) and at nan (sign(nan) = 0)
  tape.backward(y, std::vector<double>{2, 5, 5, 3, 7, 1});
  CHECK(x.grad_values() == std::vector<double>{-2.0, 0.0, 0.0, 3.0, 0.0, -1.0});
}

TEST_CASE("abs: the recorded gradient at 0 is 0 too, and abs'' = 0", "[abs][grad]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({0.0, -1.5, 2.0}, DType::Float64));
  const Tensor dx = grad(sum(abs(x)), {x}, {.create_graph = true})[0];
  CHECK(dx.values() == std::vector<double>{0.0, -1.0, 1.0});
  CHECK(grad(sum(dx * dx), {x})[0].values() == std::vector<double>{0.0, 0.0, 0.0});
}

TEST_CASE("abs: empty tensors", "[abs]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(zeros(Shape{2, 0}, DType::Float64));
  Tensor y = abs(x);
  CHECK(y.shape() == Shape{2, 0});
  sum(y).backward();
  CHECK(x.grad_values().empty());
}

TEST_CASE("abs: matches torch bit for bit, kink, nan and ±inf included", "[abs][goldens]") {
  testing::check_unary_goldens(
      "abs", [](const Tensor& x) { return abs(x); }, 0);
}

GRADCHECK_TEST_CASE("abs", "ranks 0 to 4, away from 0") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report = gradcheck("abs", [](std::span<const Tensor> in) { return abs(in[0]); },
                            {testing::signed_away_from_zero(shape, 35)});
    testing::require_gradcheck(report, "abs");
  }
}
