// Tests for ops/var_std.cpp (var, std, var_mean, std_mean).
#include <cmath>
#include <limits>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/reductions2_goldens.h"

using namespace tapegrad;

namespace test_var_std {
// Elements per output element of a case: what n − correction must stay positive for.
int64_t group_of(const testing::DimsCase& c) {
  if (c.dims.empty() || c.shape.rank() == 0) return c.shape.numel();
  int64_t n = 1;
  for (const int d : c.dims) n *= c.shape.size(d);
  return n;
}
}  // namespace test_var_std

TEST_CASE("var, std: correction, dims, keepdim, var_mean and std_mean", "[var][std]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({{1.0, 2.0, 4.0, 7.0}, {2.0, 2.0, 2.0, 2.0}}, DType::Float64));
  // Row 0: mean 3.5, Σ (x − mean)² = 21.
  CHECK(var(x, 1).values() == std::vector<double>{7.0, 0.0});
  CHECK(var(x, {1}, 0).values() == std::vector<double>{5.25, 0.0});
  CHECK(var(x, {-1}, 2, true).shape() == Shape{2, 1});
  CHECK(var(x, {-1}, 2, true).values() == std::vector<double>{10.5, 0.0});
  CHECK(tapegrad::std(x, 1).values() == std::vector<double>{std::sqrt(7.0), 0.0});
  CHECK(var(x).shape() == Shape{});
  auto [v, m] = var_mean(x, {1}, 1, true);
  CHECK(v.values() == var(x, {1}, 1, true).values());
  CHECK(m.values() == std::vector<double>{3.5, 2.0});
  auto [s, m2] = std_mean(x);
  CHECK(s.item() == tapegrad::std(x).item());
  CHECK(m2.item() == 22.0 / 8.0);
  // dX = 2/(n − 1)·dY·(X − mean); std's gradient is 0 where std is 0 (row 1).
  tape.backward(sum(tapegrad::std(x, 1)));
  const std::vector<double> g = x.grad_values();
  CHECK(g[0] == Approx(2.0 / 3.0 * (1.0 - 3.5) / (2.0 * std::sqrt(7.0))));
  for (size_t i = 4; i < 8; ++i) CHECK(g[i] == 0.0);
}

TEST_CASE("var: n <= correction gives NaN or inf as torch, errors", "[var][std][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK(std::isnan(var(tensor({3.0}, DType::Float64)).item()));              // 0 / 0
  CHECK(var(tensor({1.0, 3.0}, DType::Float64), {}, 2).item() == INFINITY);  // 2 / 0
  const Tensor empty = var(zeros({0, 3}), 0);
  CHECK(empty.shape() == Shape{3});
  for (const double e : empty.values()) CHECK(std::isnan(e));
  CHECK_THROWS_WITH(var(zeros({2, 3}), {0}, -1), "var: x [2, 3]: correction must be >= 0, got -1");
  CHECK_THROWS_WITH(tapegrad::std(zeros({2, 3}), {2}), Catch::Contains("std: x [2, 3]: dim 2"));
}

TEST_CASE("var, std: match torch, 0-D, n = 1, an empty dim, NaN/±inf included",
          "[var][std][goldens]") {
  const testing::GoldenUlps ulps{.y = 8, .dx = 16};
  for (const char* op : {"var", "std"}) {
    const bool is_var = std::string(op) == "var";
    const auto f = [is_var](const Tensor& x, std::initializer_list<int> dims, int64_t c,
                            bool keepdim) {
      return is_var ? var(x, dims, c, keepdim) : tapegrad::std(x, dims, c, keepdim);
    };
    const std::string o = op;
    testing::check_reduction_goldens(
        o + "_dim1", [&](const Tensor& x) { return f(x, {1}, 1, false); }, ulps);
    testing::check_reduction_goldens(
        o + "_dim0_keep_c0", [&](const Tensor& x) { return f(x, {0}, 0, true); }, ulps);
    testing::check_reduction_goldens(
        o + "_all", [&](const Tensor& x) { return f(x, {}, 1, false); }, ulps);
    testing::check_reduction_goldens(
        o + "_all_c2", [&](const Tensor& x) { return f(x, {}, 2, false); }, ulps);
    testing::check_reduction_goldens(
        o + "_dims_c2",
        [&](const Tensor& x) {
          return f(x, {0, 1}, 2, false);
        },
        ulps);
    testing::check_reduction_goldens(
        o + "_special", [&](const Tensor& x) { return f(x, {1}, 1, false); }, ulps);
    testing::check_reduction_goldens(
        o + "_constant_rows", [&](const Tensor& x) { return f(x, {1}, 1, false); }, ulps);
    testing::check_reduction_goldens(
        o + "_n1", [&](const Tensor& x) { return f(x, {0}, 1, false); }, ulps);
    testing::check_reduction_goldens(
        o + "_scalar", [&](const Tensor& x) { return f(x, {}, 1, false); }, ulps);
    testing::check_reduction_goldens(
        o + "_empty", [&](const Tensor& x) { return f(x, {0}, 1, false); }, ulps);
  }
}

GRADCHECK_TEST_CASE("var", "ranks 0-4, dim lists, keepdim, corrections 0-2") {
  for (const auto& c : testing::dims_reduction_cases()) {
    for (int64_t correction : {0, 1, 2}) {
      if (test_var_std::group_of(c) <= correction) continue;  // inf or NaN, no derivative
      INFO(testing::dims_case_text(c) << " correction " << correction);
      auto report = gradcheck(
          "var",
          [&](std::span<const Tensor> in) { return var(in[0], c.dims, correction, c.keepdim); },
          {random_input(c.shape, 28)});
      testing::require_gradcheck(report, "var");
    }
  }
}

GRADCHECK_TEST_CASE("std", "ranks 1-4, dim lists, keepdim") {
  for (const auto& c : testing::dims_reduction_cases()) {
    if (test_var_std::group_of(c) <= 1) continue;
    INFO(testing::dims_case_text(c));
    auto report = gradcheck(
        "std",
        [&](std::span<const Tensor> in) { return tapegrad::std(in[0], c.dims, 1, c.keepdim); },
        {random_input(c.shape, 29)});
    testing::require_gradcheck(report, "std");
  }
}
