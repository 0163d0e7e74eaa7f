// Tests for ops/exp2.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("exp2: small exact case, forward and backward", "[exp2]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({0.0, 3.0, -1.0}, DType::Float64));
  Tensor y = exp2(x);
  const std::vector<double> y_want{1.0, 8.0, 0.5};
  for (size_t i = 0; i < y_want.size(); ++i)
    CHECK(y.values()[i] == Approx(y_want[i]).epsilon(1e-15));
  tape.backward(y, std::vector<double>{1.0, 1.0, 2.0});  // dX = dY·2ˣ·ln 2
  const std::vector<double> expected{testing::kLn2, 8.0 * testing::kLn2, testing::kLn2};
  const std::vector<double> g = x.grad_values();
  REQUIRE(g.size() == expected.size());
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(expected[i]).epsilon(1e-15));
}

TEST_CASE("exp2: nan and ±inf as in torch, and empty tensors", "[exp2]") {
  testing::check_special_values([](const Tensor& x) { return exp2(x); }, {NAN, INFINITY, -INFINITY},
                                {NAN, INFINITY, 0.0}, {NAN, INFINITY, 0.0});
}

TEST_CASE("exp2: matches torch's forward and backward within 2 ulps, float32 and float64",
          "[exp2][goldens]") {
  const int64_t exp2_equal = testing::check_unary_goldens(
      "exp2", [](const Tensor& x) { return exp2(x); }, testing::kLibmUlps);
  INFO("exp2: elements equal to torch's bit for bit: " << exp2_equal);
  CHECK(exp2_equal > 0);
}

GRADCHECK_TEST_CASE("exp2", "ranks 0 to 4") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report = gradcheck("exp2", [](std::span<const Tensor> in) { return exp2(in[0]); },
                            {random_input(shape, 35, -2.0, 2.0)});
    testing::require_gradcheck(report, "exp2");
  }
}
