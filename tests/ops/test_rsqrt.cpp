// Tests for ops/rsqrt.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("rsqrt: small exact case, forward and backward", "[rsqrt]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({4.0, 0.25, 1.0}, DType::Float64));
  Tensor y = rsqrt(x);
  const std::vector<double> y_want{0.5, 2.0, 1.0};
  for (size_t i = 0; i < y_want.size(); ++i)
    CHECK(y.values()[i] == Approx(y_want[i]).epsilon(1e-15));
  tape.backward(y, std::vector<double>{1.0, 1.0, -2.0});  // dX = −½·dY·X^(−3/2)
  const std::vector<double> expected{-0.0625, -4.0, 1.0};
  const std::vector<double> g = x.grad_values();
  REQUIRE(g.size() == expected.size());
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(expected[i]).epsilon(1e-15));
}

TEST_CASE("rsqrt: nan and ±inf as in torch, and empty tensors", "[rsqrt]") {
  testing::check_special_values([](const Tensor& x) { return rsqrt(x); },
                                {NAN, INFINITY, 0.0, -1.0}, {NAN, 0.0, INFINITY, NAN},
                                {NAN, -0.0, -INFINITY, NAN});
}

TEST_CASE("rsqrt: matches torch's forward and backward bit for bit, float32 and float64",
          "[rsqrt][goldens]") {
  testing::check_unary_goldens(
      "rsqrt", [](const Tensor& x) { return rsqrt(x); }, 0);
  testing::check_unary_goldens(
      "rsqrt_positive", [](const Tensor& x) { return rsqrt(x); }, 0);
}

GRADCHECK_TEST_CASE("rsqrt", "ranks 0 to 4") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report = gradcheck("rsqrt", [](std::span<const Tensor> in) { return rsqrt(in[0]); },
                            {random_input(shape, 35, 0.3, 3.0)});
    testing::require_gradcheck(report, "rsqrt");
  }
}
