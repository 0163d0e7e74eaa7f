// Tests for tensors of rank 5 to 8: one case per op family against torch 1.13 (goldens from
// tests/goldens/rank8/make_rank8_goldens.py), float64 gradchecks at rank 6, and rank-9 errors.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/gradcheck.h>
#include <tapegrad/graph/ids.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

namespace test_rank8 {

using Op = std::function<Tensor(const std::vector<Tensor>& xs, const std::vector<Ids>& ids)>;

const testing::GoldenFile& goldens() {
  return testing::golden_file("rank8/rank8.txt");
}

// `actual` against torch's record: bit for bit when ulps is 0 (ops that only move or pick
// elements), else within `ulps` (ops that sum, in another order than torch's).
void compare(const std::vector<double>& actual, const testing::GoldenTensor& torch, double ulps,
             const std::string& what) {
  INFO(what);
  if (ulps == 0) {
    CHECK(actual == torch.values);
  } else {
    testing::require_near(actual, torch, torch.dtype, ulps, what);
  }
}

// Runs golden case `name`: its inputs x0, x1, .. (requiring grad) and index tensors i0, ..
// through `op`, then backward with dy; the output must match torch within `ulps` and every
// input's gradient within `grad_ulps` (a gradient summed over broadcast dims adds in another
// order than torch's).
void check_case(const std::string& name, const Op& op, double ulps = 0, double grad_ulps = 0) {
  INFO("case " << name);
  const testing::GoldenFile& g = goldens();
  Tape tape;
  TapeScope scope(tape);
  std::vector<Tensor> xs;
  std::vector<Ids> ids;
  for (int k = 0; g.contains(name + ".x" + std::to_string(k)); ++k) {
    const testing::GoldenTensor& x = g[name + ".x" + std::to_string(k)];
    xs.push_back(from_values(x.shape, x.values, x.dtype, true));
  }
  for (int k = 0; g.contains(name + ".i" + std::to_string(k)); ++k) {
    const testing::GoldenTensor& i = g[name + ".i" + std::to_string(k)];
    ids.emplace_back(i.shape, i.ints());
  }
  const Tensor y = op(xs, ids);
  const testing::GoldenTensor& want = g[name + ".y"];
  REQUIRE(y.shape() == want.shape);
  REQUIRE(y.dtype() == want.dtype);
  compare(y.values(), want, ulps, name + ".y");
  tape.backward(y, g[name + ".dy"].values);
  for (size_t k = 0; k < xs.size(); ++k) {
    const std::string dx = name + ".dx" + std::to_string(k);
    compare(xs[k].grad_values(), g[dx], std::max(ulps, grad_ulps), dx);
  }
}

// A float tensor of the golden's values for where's condition (recorded as index i0).
Tensor condition(const Ids& cond) {
  std::vector<double> values;
  for (int64_t v : cond.values()) values.push_back(static_cast<double>(v));
  return from_values(cond.shape(), values, DType::Float64);
}

}  // namespace test_rank8

using test_rank8::check_case;

TEST_CASE("rank 8: broadcast binary ops and where match torch with gradients", "[rank8][goldens]") {
  check_case(
      "mul.f32", [](auto& x, auto&) { return mul(x[0], x[1]); }, 0, 16);
  check_case(
      "mul.f64", [](auto& x, auto&) { return mul(x[0], x[1]); }, 0, 16);
  check_case(
      "add", [](auto& x, auto&) { return add(x[0], x[1]); }, 0, 16);
  check_case(
      "sub", [](auto& x, auto&) { return sub(x[0], x[1]); }, 0, 16);
  check_case(
      "where", [](auto& x, auto& i) { return where(test_rank8::condition(i[0]), x[0], x[1]); }, 0,
      16);
}

TEST_CASE("rank 8: reductions over dims, keepdim both ways, match torch", "[rank8][goldens]") {
  for (const bool keep : {false, true}) {
    const std::string k = keep ? "keep" : "drop";
    check_case(
        "sum_dims." + k,
        [&](auto& x, auto&) {
          return sum(x[0], std::vector<int>{1, 4, -2}, keep);
        },
        4);
    check_case(
        "mean_dims." + k,
        [&](auto& x, auto&) {
          return mean(x[0], std::vector<int>{0, 5}, keep);
        },
        4);
    check_case("amax." + k, [&](auto& x, auto&) {
      return amax(x[0], std::vector<int>{2, 6}, keep);
    });
    check_case(
        "sum_dim." + k, [&](auto& x, auto&) { return sum(x[0], 3, keep); }, 4);
  }
}

TEST_CASE("rank 8: permute, transpose, movedim and the view ops match torch", "[rank8][goldens]") {
  check_case("permute", [](auto& x, auto&) { return permute(x[0], {6, 0, 3, 1, 5, 2, 4}); });
  check_case("transpose", [](auto& x, auto&) { return transpose(x[0], 1, 6); });
  check_case("transpose_last", [](auto& x, auto&) { return transpose(x[0], -1, -2); });
  check_case("movedim", [](auto& x, auto&) {
    return movedim(x[0], std::vector<int64_t>{0, 5}, std::vector<int64_t>{6, 1});
  });
  check_case("reshape", [](auto& x, auto&) { return reshape(x[0], {2, 1, 3, 2, 1, 2, 2, 3}); });
  check_case("flatten", [](auto& x, auto&) { return flatten(x[0], 2, 5); });
  check_case("unflatten", [](auto& x, auto&) { return unflatten(x[0], 2, {2, 1, 3, 2}); });
  check_case("squeeze", [](auto& x, auto&) { return squeeze(x[0]); });
  check_case("unsqueeze", [](auto& x, auto&) { return unsqueeze(x[0], 4); });
}

TEST_CASE("rank 8: cat, stack, split, expand, sum_to_size and repeat match torch",
          "[rank8][goldens]") {
  check_case("cat", [](auto& x, auto&) { return cat(x, 3); });
  check_case("stack", [](auto& x, auto&) { return stack(x, 5); });
  check_case("split", [](auto& x, auto&) { return split(x[0], {1, 2}, 4)[1]; });
  check_case(
      "expand",
      [](auto& x, auto&) {
        return expand(x[0], std::vector<int64_t>{2, 3, 2, 2, 3, 2, 2, 2});
      },
      0, 16);
  check_case(
      "sum_to_size",
      [](auto& x, auto&) {
        return sum_to_size(x[0], Shape{2, 1, 2, 1, 3, 1});
      },
      4);
  check_case(
      "repeat",
      [](auto& x, auto&) {
        return repeat(x[0], {2, 1, 2, 1, 2, 1, 1, 2});
      },
      0, 16);
}

TEST_CASE("rank 8: roll, flip and the indexing ops match torch", "[rank8][goldens]") {
  check_case("roll", [](auto& x, auto&) { return roll(x[0], {1, -2, 3}, {1, 4, 7}); });
  check_case("roll_flat", [](auto& x, auto&) { return roll(x[0], 5); });
  check_case("flip", [](auto& x, auto&) { return flip(x[0], {0, 3, 6}); });
  check_case("index_select", [](auto& x, auto& i) { return index_select(x[0], 4, i[0]); });
  check_case("gather", [](auto& x, auto& i) { return gather(x[0], 3, i[0]); });
  check_case("scatter", [](auto& x, auto& i) { return scatter(x[0], 4, i[0], x[1]); });
  check_case("scatter_add", [](auto& x, auto& i) { return scatter_add(x[0], 4, i[0], x[1]); });
}

TEST_CASE("rank 8: softmax over a middle dim and batched matmul match torch", "[rank8][goldens]") {
  check_case(
      "softmax", [](auto& x, auto&) { return softmax(x[0], 3); }, 8);
  check_case(
      "log_softmax", [](auto& x, auto&) { return log_softmax(x[0], -5); }, 8);
  check_case(
      "matmul", [](auto& x, auto&) { return matmul(x[0], x[1]); }, 8);
  check_case(
      "matmul_rank8", [](auto& x, auto&) { return matmul(x[0], x[1]); }, 8);
}

TEST_CASE("rank 8: a result of rank 9 is an Error naming the op and the shape", "[rank8][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros({2, 1, 3, 1, 2, 1, 1, 2});
  CHECK_THROWS_WITH(unsqueeze(x, 0),
                    "unsqueeze: x [2, 1, 3, 1, 2, 1, 1, 2]: the result would have rank 9, above "
                    "the maximum of 8");
  CHECK_THROWS_WITH(expand(x, std::vector<int64_t>{2, 2, 1, 3, 1, 2, 1, 1, 2}),
                    Catch::Contains("expand") && Catch::Contains("[2, 1, 3, 1, 2, 1, 1, 2]") &&
                        Catch::Contains("[2, 2, 1, 3, 1, 2, 1, 1, 2]"));
  CHECK_THROWS_WITH(stack({x, x}), Catch::Contains("stack") &&
                                       Catch::Contains("[2, 1, 3, 1, 2, 1, 1, 2]") &&
                                       Catch::Contains("rank 9"));
  CHECK_THROWS_WITH(reshape(x, {1, 2, 1, 3, 1, 2, 1, 1, 2}),
                    Catch::Contains("reshape") && Catch::Contains("rank 9"));
  CHECK_THROWS_WITH(zeros({1, 1, 1, 1, 1, 1, 1, 1, 1}),
                    "Shape: [1, 1, 1, 1, 1, 1, 1, 1, 1] has rank 9, above the maximum of 8");
  CHECK(tape.size() == 1);  // nothing recorded by the failed calls
}

TEST_CASE("rank 8: a jacobian of rank 9 is an Error naming both shapes", "[rank8][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = requires_grad(zeros({1, 1, 1, 1, 2}, DType::Float64));
  const TensorFunction f = [](std::span<const Tensor> in) { return reshape(in[0], {1, 2, 1, 1}); };
  CHECK_THROWS_WITH(jacobian(f, std::vector<Tensor>{x}),
                    Catch::Contains("jacobian/hessian: [1, 2, 1, 1] and [1, 1, 1, 1, 2] make a "
                                    "result of rank 9"));
}

GRADCHECK_TEST_CASE("mul", "rank 6 against rank 5, both broadcast") {
  const auto report = gradcheck(
      "mul", [](std::span<const Tensor> in) { return mul(in[0], in[1]); },
      {random_input(Shape{2, 1, 3, 1, 2, 2}, 61), random_input(Shape{2, 3, 1, 1, 2}, 62)});
  testing::require_gradcheck(report, "mul");
}

GRADCHECK_TEST_CASE("where", "rank 6, all three operands broadcast") {
  GradcheckInput cond = random_input(Shape{2, 1, 1, 2, 1, 3}, 63, -1.0, 1.0);
  for (double& v : cond.values) v = v > 0 ? 1.0 : 0.0;
  cond.requires_grad = false;
  const auto report = gradcheck(
      "where", [](std::span<const Tensor> in) { return where(in[0], in[1], in[2]); },
      {cond, random_input(Shape{1, 2, 2, 1, 3}, 64), random_input(Shape{2, 1, 2, 2, 1, 1}, 65)});
  testing::require_gradcheck(report, "where");
}

GRADCHECK_TEST_CASE("permute", "rank 6") {
  const auto report = gradcheck("permute",
                                [](std::span<const Tensor> in) {
                                  return permute(in[0], {3, 5, 0, 2, 4, 1});
                                },
                                {random_input(Shape{2, 1, 3, 2, 1, 2}, 66)});
  testing::require_gradcheck(report, "permute");
}

GRADCHECK_TEST_CASE("sum_dims", "rank 6, three dims kept") {
  const auto report = gradcheck("sum_dims",
                                [](std::span<const Tensor> in) {
                                  return sum(in[0], std::vector<int>{0, 3, 5}, true);
                                },
                                {random_input(Shape{2, 1, 3, 2, 1, 2}, 67)});
  testing::require_gradcheck(report, "sum_dims");
}

GRADCHECK_TEST_CASE("softmax", "rank 6, a middle dim") {
  const auto report =
      gradcheck("softmax", [](std::span<const Tensor> in) { return softmax(in[0], 2); },
                {random_input(Shape{2, 1, 3, 2, 1, 2}, 68)});
  testing::require_gradcheck(report, "softmax");
}

GRADCHECK_TEST_CASE("matmul", "rank 6, three batch dims broadcast") {
  const auto report = gradcheck(
      "matmul", [](std::span<const Tensor> in) { return matmul(in[0], in[1]); },
      {random_input(Shape{2, 1, 2, 1, 2, 3}, 69), random_input(Shape{1, 2, 1, 2, 3, 2}, 70)});
  testing::require_gradcheck(report, "matmul");
}
