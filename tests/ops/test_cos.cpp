// Tests for ops/cos.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("cos: small exact case, forward and backward", "[cos]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({0.0, -0.0}, DType::Float64));
  Tensor y = cos(x);
  const std::vector<double> y_want{1.0, 1.0};
  for (size_t i = 0; i < y_want.size(); ++i)
    CHECK(y.values()[i] == Approx(y_want[i]).epsilon(1e-15));
  tape.backward(y, std::vector<double>{2.0, 3.0});  // dX = −dY·sin X
  const std::vector<double> expected{-0.0, 0.0};
  const std::vector<double> g = x.grad_values();
  REQUIRE(g.size() == expected.size());
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(expected[i]).epsilon(1e-15));
}

TEST_CASE("cos: nan and ±inf as in torch, and empty tensors", "[cos]") {
  testing::check_special_values([](const Tensor& x) { return cos(x); }, {NAN, INFINITY, -INFINITY},
                                {NAN, NAN, NAN}, {NAN, NAN, NAN});
}

TEST_CASE("cos: matches torch's forward and backward within 2 ulps, float32 and float64",
          "[cos][goldens]") {
  const int64_t cos_equal = testing::check_unary_goldens(
      "cos", [](const Tensor& x) { return cos(x); }, testing::kLibmUlps);
  INFO("cos: elements equal to torch's bit for bit: " << cos_equal);
  CHECK(cos_equal > 0);
}

GRADCHECK_TEST_CASE("cos", "ranks 0 to 4") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report = gradcheck("cos", [](std::span<const Tensor> in) { return cos(in[0]); },
                            {random_input(shape, 35, -3.0, 3.0)});
    testing::require_gradcheck(report, "cos");
  }
}
