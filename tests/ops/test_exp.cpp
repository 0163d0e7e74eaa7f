// Tests for ops/exp.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/elementwise_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("exp: small case, forward and backward", "[exp]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({0.0, 1.0, -2.0}, DType::Float64));
  Tensor y = exp(x);
  const std::vector<double> v = y.values();
  CHECK(v[0] == 1.0);
  CHECK(v[1] == Approx(std::exp(1.0)).epsilon(1e-15));
  CHECK(v[2] == Approx(std::exp(-2.0)).epsilon(1e-15));
  tape.backward(y, std::vector<double>{2, 1, 1});  // dX = dY · eˣ
  const std::vector<double> g = x.grad_values();
  CHECK(g[0] == 2.0);
  CHECK(g[1] == v[1]);
  CHECK(g[2] == v[2]);
}

TEST_CASE("exp: overflow and underflow in float32", "[exp]") {
  Tape tape;
  TapeScope scope(tape);
  const std::vector<double> v = exp(tensor({100.0, -200.0, -INFINITY})).values();
  CHECK(v[0] == INFINITY);
  CHECK(v[1] == 0.0);
  CHECK(v[2] == 0.0);
}

TEST_CASE("exp: matches torch's float32 forward and backward", "[exp][goldens]") {
  testing::check_elementwise_goldens("exp",
                                     [](const Tensor& a, const Tensor&, double) { return exp(a); });
}

GRADCHECK_TEST_CASE("exp", "ranks 0 to 4") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report = gradcheck("exp", [](std::span<const Tensor> in) { return exp(in[0]); },
                            {random_input(shape, 1, -2.0, 2.0)});
    testing::require_gradcheck(report, "exp");
  }
}
