// Tests for ops/logsumexp.cpp.
#include <cmath>
#include <limits>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/reductions2_goldens.h"

using namespace tapegrad;

TEST_CASE("logsumexp: stable for large values, −inf rows give −inf, keepdim", "[logsumexp]") {
  Tape tape;
  TapeScope scope(tape);
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x =
      requires_grad(tensor({{1000.0, 1000.0}, {-inf, -inf}, {0.0, std::log(3.0)}}, DType::Float64));
  Tensor y = logsumexp(x, 1);
  const std::vector<double> v = y.values();
  CHECK(v[0] == Approx(1000.0 + std::log(2.0)).epsilon(1e-15));
  CHECK(v[1] == -inf);
  CHECK(v[2] == Approx(std::log(4.0)).epsilon(1e-15));
  CHECK(logsumexp(x, {0, 1}, true).shape() == Shape{1, 1});
  CHECK(logsumexp(x, {}).shape() == Shape{});
  // dX = dY ⊙ softmax(X) along the dim.
  tape.backward(y, std::vector<double>{2.0, 0.0, 4.0});
  const std::vector<double> g = x.grad_values();
  CHECK(g[0] == Approx(1.0));
  CHECK(g[1] == Approx(1.0));
  CHECK(g[4] == Approx(1.0));
  CHECK(g[5] == Approx(3.0));
  CHECK(logsumexp(zeros({0, 3}), 0).values()[0] == -inf);
  CHECK_THROWS_WITH(logsumexp(zeros({2, 3}), {0, 2}),
                    Catch::Contains("logsumexp: x [2, 3]: dim 2 is out of range"));
}

TEST_CASE("logsumexp: matches torch, ±inf and NaN rows, 0-D, empty", "[logsumexp][goldens]") {
  const testing::GoldenUlps ulps{.y = 4, .dx = 8};
  testing::check_reduction_goldens(
      "logsumexp_dim1", [](const Tensor& x) { return logsumexp(x, 1); }, ulps);
  testing::check_reduction_goldens(
      "logsumexp_dim0_keep", [](const Tensor& x) { return logsumexp(x, 0, true); }, ulps);
  testing::check_reduction_goldens(
      "logsumexp_dims",
      [](const Tensor& x) {
        return logsumexp(x, {0, 2});
      },
      ulps);
  testing::check_reduction_goldens(
      "logsumexp_scalar", [](const Tensor& x) { return logsumexp(x, 0); }, ulps);
  testing::check_reduction_goldens(
      "logsumexp_empty", [](const Tensor& x) { return logsumexp(x, 0); }, ulps);
  testing::check_reduction_goldens(
      "logsumexp_empty_out", [](const Tensor& x) { return logsumexp(x, 1); }, ulps);
}

GRADCHECK_TEST_CASE("logsumexp", "ranks 0-4, dim lists, keepdim both ways") {
  for (const auto& c : testing::dims_reduction_cases()) {
    INFO(testing::dims_case_text(c));
    auto report =
        gradcheck("logsumexp",
                  [&](std::span<const Tensor> in) { return logsumexp(in[0], c.dims, c.keepdim); },
                  {random_input(c.shape, 30, -3.0, 3.0)});
    testing::require_gradcheck(report, "logsumexp");
  }
}
