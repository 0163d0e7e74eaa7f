// Tests for ops/mean_dims.cpp (mean over a list of dims).
#include <cmath>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/reductions2_goldens.h"

using namespace tapegrad;

TEST_CASE("mean_dims: lists of dims, keepdim, all dims, an empty group gives NaN", "[mean_dims]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(from_values(
      {2, 2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, DType::Float64));
  Tensor y = mean(x, {0, 2});
  CHECK(y.shape() == Shape{2});
  CHECK(y.values() == std::vector<double>{30.0 / 6.0, 48.0 / 6.0});
  CHECK(mean(x, {}, true).shape() == Shape{1, 1, 1});
  CHECK(mean(x, {}).item() == 6.5);
  tape.backward(y, std::vector<double>{6.0, 12.0});
  CHECK(x.grad_values() == std::vector<double>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2});
  const Tensor e = mean(zeros({0, 3}), {0});
  CHECK(e.shape() == Shape{3});
  for (const double v : e.values()) CHECK(std::isnan(v));
  CHECK_THROWS_WITH(mean(x, {3}), Catch::Contains("mean_dims") && Catch::Contains("dim 3"));
}

TEST_CASE("mean_dims: matches torch, 0-D, an empty dim and NaN/±inf included",
          "[mean_dims][goldens]") {
  const testing::GoldenUlps sums{.y = 4, .dx = 0};
  testing::check_reduction_goldens(
      "mean_dims02",
      [](const Tensor& x) {
        return mean(x, {0, 2});
      },
      sums);
  testing::check_reduction_goldens(
      "mean_dims_neg_keep",
      [](const Tensor& x) {
        return mean(x, {-1, 0}, true);
      },
      sums);
  testing::check_reduction_goldens(
      "mean_dims_all", [](const Tensor& x) { return mean(x, {}); }, sums);
  testing::check_reduction_goldens(
      "mean_dims1_keep", [](const Tensor& x) { return mean(x, {1}, true); }, sums);
  testing::check_reduction_goldens("mean_dims_scalar",
                                   [](const Tensor& x) { return mean(x, {0}); });
  testing::check_reduction_goldens("mean_dims_empty", [](const Tensor& x) { return mean(x, {0}); });
}

GRADCHECK_TEST_CASE("mean_dims", "ranks 0-4, dim lists, keepdim both ways") {
  for (const auto& c : testing::dims_reduction_cases()) {
    INFO(testing::dims_case_text(c));
    auto report = gradcheck(
        "mean_dims", [&](std::span<const Tensor> in) { return mean(in[0], c.dims, c.keepdim); },
        {random_input(c.shape, 27)});
    testing::require_gradcheck(report, "mean_dims");
  }
}
