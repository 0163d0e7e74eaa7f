// Tests for ops/square.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("square: small exact case, forward and backward", "[square]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({3.0, -0.5, 0.0}, DType::Float64));
  Tensor y = square(x);
  const std::vector<double> y_want{9.0, 0.25, 0.0};
  for (size_t i = 0; i < y_want.size(); ++i)
    CHECK(y.values()[i] == Approx(y_want[i]).epsilon(1e-15));
  tape.backward(y, std::vector<double>{1.0, 2.0, 5.0});  // dX = 2·dY·X
  const std::vector<double> expected{6.0, -2.0, 0.0};
  const std::vector<double> g = x.grad_values();
  REQUIRE(g.size() == expected.size());
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(expected[i]).epsilon(1e-15));
}

TEST_CASE("square: nan and ±inf as in torch, and empty tensors", "[square]") {
  testing::check_special_values([](const Tensor& x) { return square(x); },
                                {NAN, INFINITY, -INFINITY}, {NAN, INFINITY, INFINITY},
                                {NAN, INFINITY, -INFINITY});
}

TEST_CASE("square: matches torch's forward and backward bit for bit, float32 and float64",
          "[square][goldens]") {
  testing::check_unary_goldens(
      "square", [](const Tensor& x) { return square(x); }, 0);
}

GRADCHECK_TEST_CASE("square", "ranks 0 to 4") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report = gradcheck("square", [](std::span<const Tensor> in) { return square(in[0]); },
                            {random_input(shape, 35, -2.0, 2.0)});
    testing::require_gradcheck(report, "square");
  }
}
