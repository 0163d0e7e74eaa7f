// Tests for ops/sum_dims.cpp (sum over a list of dims).
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/reductions2_goldens.h"

using namespace tapegrad;

TEST_CASE("sum_dims: lists of dims, keepdim, the empty list sums everything", "[sum_dims]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(from_values(
      {2, 2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, DType::Float64));
  Tensor y = sum(x, {0, 2});
  CHECK(y.shape() == Shape{2});
  CHECK(y.values() == std::vector<double>{1 + 2 + 3 + 7 + 8 + 9, 4 + 5 + 6 + 10 + 11 + 12});
  CHECK(sum(x, {-1, 0}, true).shape() == Shape{1, 2, 1});
  CHECK(sum(x, {}).shape() == Shape{});
  CHECK(sum(x, {}).item() == 78.0);
  CHECK(sum(x, std::vector<int>{1}).shape() == Shape{2, 3});
  tape.backward(y, std::vector<double>{1.0, 10.0});
  CHECK(x.grad_values() == std::vector<double>{1, 1, 1, 10, 10, 10, 1, 1, 1, 10, 10, 10});
}

TEST_CASE("sum_dims: errors name the op, the tensor and the dim", "[sum_dims][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 3});
  CHECK_THROWS_WITH(sum(x, {0, -2}),
                    "sum_dims: x [2, 3]: dim 0 appears more than once in the list of dims");
  CHECK_THROWS_WITH(sum(scalar(1.0), {1}),
                    "sum_dims: x []: dim 1 is out of range for rank 0 (expected -1..0)");
}

TEST_CASE("sum_dims: matches torch, 0-D, an empty dim and NaN/±inf included",
          "[sum_dims][goldens]") {
  const testing::GoldenUlps sums{.y = 4, .dx = 0};
  testing::check_reduction_goldens(
      "sum_dims02",
      [](const Tensor& x) {
        return sum(x, {0, 2});
      },
      sums);
  testing::check_reduction_goldens(
      "sum_dims_neg_keep",
      [](const Tensor& x) {
        return sum(x, {-1, 0}, true);
      },
      sums);
  testing::check_reduction_goldens(
      "sum_dims_all", [](const Tensor& x) { return sum(x, {}); }, sums);
  testing::check_reduction_goldens(
      "sum_dims1_keep", [](const Tensor& x) { return sum(x, {1}, true); }, sums);
  testing::check_reduction_goldens("sum_dims_scalar", [](const Tensor& x) { return sum(x, {0}); });
  testing::check_reduction_goldens("sum_dims_empty", [](const Tensor& x) { return sum(x, {0}); });
}

GRADCHECK_TEST_CASE("sum_dims", "ranks 0-4, dim lists, keepdim both ways") {
  for (const auto& c : testing::dims_reduction_cases()) {
    INFO(testing::dims_case_text(c));
    auto report = gradcheck(
        "sum_dims", [&](std::span<const Tensor> in) { return sum(in[0], c.dims, c.keepdim); },
        {random_input(c.shape, 26)});
    testing::require_gradcheck(report, "sum_dims");
  }
}
