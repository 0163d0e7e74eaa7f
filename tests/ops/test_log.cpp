// Tests for ops/log.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/elementwise_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("log: small case, forward and backward", "[log]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({1.0, 4.0, 0.5}, DType::Float64));
  Tensor y = log(x);
  const std::vector<double> v = y.values();
  CHECK(v[0] == 0.0);
  CHECK(v[1] == Approx(std::log(4.0)).epsilon(1e-15));
  CHECK(v[2] == Approx(-std::log(2.0)).epsilon(1e-15));
  tape.backward(y, std::vector<double>{1, 1, 3});  // dX = dY / x
  CHECK(x.grad_values() == std::vector<double>{1, 0.25, 6});
}

TEST_CASE("log: of zero is -inf, of a negative is nan, like torch", "[log]") {
  Tape tape;
  TapeScope scope(tape);
  const std::vector<double> v = log(tensor({0.0, -1.0, INFINITY})).values();
  CHECK(v[0] == -INFINITY);
  CHECK(std::isnan(v[1]));
  CHECK(v[2] == INFINITY);
}

TEST_CASE("log: matches torch's float32 forward and backward", "[log][goldens]") {
  testing::check_elementwise_goldens("log",
                                     [](const Tensor& a, const Tensor&, double) { return log(a); });
}

GRADCHECK_TEST_CASE("log", "positive inputs, ranks 0 to 4") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report = gradcheck("log", [](std::span<const Tensor> in) { return log(in[0]); },
                            {random_input(shape, 1, 0.2, 3.0)});
    testing::require_gradcheck(report, "log");
  }
}
