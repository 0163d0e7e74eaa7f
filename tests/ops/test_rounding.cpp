// Tests for ops/rounding.cpp (floor, ceil, round, trunc).
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("floor, ceil, round: small cases, halves to even, nan and ±inf", "[floor][ceil][round]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({-2.5, -0.5, 0.5, 1.5, 2.5, 2.7, INFINITY}, DType::Float64));
  CHECK(floor(x).values() == std::vector<double>{-3.0, -1.0, 0.0, 1.0, 2.0, 2.0, INFINITY});
  CHECK(ceil(x).values() == std::vector<double>{-2.0, -0.0, 1.0, 2.0, 3.0, 3.0, INFINITY});
  const Tensor r = round(x);
  CHECK(r.values() == std::vector<double>{-2.0, -0.0, 0.0, 2.0, 2.0, 3.0, INFINITY});
  CHECK(std::signbit(r.values()[1]));  // round(−0.5) = −0
  CHECK(std::isnan(round(tensor({NAN})).values()[0]));
  // The gradient is zero everywhere (torch's zeros_like)
  tape.backward(sum(floor(x) + ceil(x) + r), {.retain_graph = true});
  CHECK(x.grad_values() == std::vector<double>(7, 0.0));
  CHECK(grad(sum(round(x)), {x})[0].values() == std::vector<double>(7, 0.0));
  CHECK(round(zeros(Shape{0, 2})).shape() == Shape{0, 2});
}

TEST_CASE("floor, ceil, round: match torch bit for bit", "[floor][ceil][round][goldens]") {
  testing::check_unary_goldens(
      "floor", [](const Tensor& x) { return floor(x); }, 0);
  testing::check_unary_goldens(
      "ceil", [](const Tensor& x) { return ceil(x); }, 0);
  testing::check_unary_goldens(
      "round", [](const Tensor& x) { return round(x); }, 0);
}

TEST_CASE("trunc: matches torch bit for bit, toward zero, zero gradient", "[trunc][goldens]") {
  testing::check_unary_goldens(
      "trunc", [](const Tensor& x) { return trunc(x); }, 0, testing::math_goldens());
  testing::check_empty_input([](const Tensor& x) { return trunc(x); });
}

GRADCHECK_TEST_CASE("floor", "zero gradient, away from the integers") {
  // x·floor(x): the gradient is floor(x), through mul alone; inputs in (0.1, 0.9) + k.
  auto report = gradcheck("floor", [](std::span<const Tensor> in) { return floor(in[0]) * in[0]; },
                          {random_input({2, 3}, 37, 1.1, 1.9)});
  testing::require_gradcheck(report, "floor");
}

GRADCHECK_TEST_CASE("ceil", "zero gradient, away from the integers") {
  auto report = gradcheck("ceil", [](std::span<const Tensor> in) { return ceil(in[0]) * in[0]; },
                          {random_input({2, 3}, 38, -1.9, -1.1)});
  testing::require_gradcheck(report, "ceil");
}

GRADCHECK_TEST_CASE("round", "zero gradient, away from the halves") {
  auto report = gradcheck("round", [](std::span<const Tensor> in) { return round(in[0]) * in[0]; },
                          {random_input({2, 3}, 39, 0.6, 1.4)});
  testing::require_gradcheck(report, "round");
}

GRADCHECK_TEST_CASE("trunc", "zero gradient, away from the integers") {
  auto report = gradcheck("trunc", [](std::span<const Tensor> in) { return trunc(in[0]) * in[0]; },
                          {random_input({2, 3}, 40, -1.9, -1.1)});
  testing::require_gradcheck(report, "trunc");
}
