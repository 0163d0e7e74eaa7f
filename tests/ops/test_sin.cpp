// Tests for ops/sin.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("sin: small exact case, forward and backward", "[sin]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({0.0, -0.0}, DType::Float64));
  Tensor y = sin(x);
  const std::vector<double> y_want{0.0, -0.0};
  for (size_t i = 0; i < y_want.size(); ++i)
    CHECK(y.values()[i] == Approx(y_want[i]).epsilon(1e-15));
  tape.backward(y, std::vector<double>{2.0, 3.0});  // dX = dY·cos X
  const std::vector<double> expected{2.0, 3.0};
  const std::vector<double> g = x.grad_values();
  REQUIRE(g.size() == expected.size());
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(expected[i]).epsilon(1e-15));
}

TEST_CASE("sin: nan and ±inf as in torch, and empty tensors", "[sin]") {
  testing::check_special_values([](const Tensor& x) { return sin(x); }, {NAN, INFINITY, -INFINITY},
                                {NAN, NAN, NAN}, {NAN, NAN, NAN});
}

TEST_CASE("sin: matches torch's forward and backward within 2 ulps, float32 and float64",
          "[sin][goldens]") {
  const int64_t sin_equal = testing::check_unary_goldens(
      "sin", [](const Tensor& x) { return sin(x); }, testing::kLibmUlps);
  INFO("sin: elements equal to torch's bit for bit: " << sin_equal);
  CHECK(sin_equal > 0);
}

GRADCHECK_TEST_CASE("sin", "ranks 0 to 4") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report = gradcheck("sin", [](std::span<const Tensor> in) { return sin(in[0]); },
                            {random_input(shape, 35, -3.0, 3.0)});
    testing::require_gradcheck(report, "sin");
  }
}
