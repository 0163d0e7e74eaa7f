// Tests for ops/amax_amin.cpp (amax, amin).
#include <cmath>
#include <limits>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/reductions2_goldens.h"

using namespace tapegrad;

TEST_CASE("amax, amin: dim lists, keepdim, all dims, ties share the gradient", "[amax][amin]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({{1.0, 3.0, 3.0}, {4.0, -2.0, 0.0}}, DType::Float64));
  Tensor rows = amax(x, 1);
  CHECK(rows.shape() == Shape{2});
  CHECK(rows.values() == std::vector<double>{3.0, 4.0});
  CHECK(amin(x, {0}, true).shape() == Shape{1, 3});
  CHECK(amin(x, {0}, true).values() == std::vector<double>{1.0, -2.0, 0.0});
  CHECK(amax(x).shape() == Shape{});
  CHECK(amax(x).item() == 4.0);
  CHECK(amin(x, {-1, 0}, true).shape() == Shape{1, 1});
  CHECK(amin(x, {-1, 0}).item() == -2.0);
  tape.backward(rows, std::vector<double>{2.0, 1.0});
  CHECK(x.grad_values() == std::vector<double>{0.0, 1.0, 1.0, 1.0, 0.0, 0.0});
}

TEST_CASE("amax: a NaN wins and its group's gradient is NaN, as torch's", "[amax][amin]") {
  Tape tape;
  TapeScope scope(tape);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = requires_grad(tensor({1.0, nan, 3.0}, DType::Float64));
  Tensor y = amax(x);
  CHECK(std::isnan(y.item()));
  y.backward();
  for (const double g : x.grad_values()) CHECK(std::isnan(g));
}

TEST_CASE("amax, amin: errors name the op, the tensor and the dim", "[amax][amin][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 3});
  x.set_name("scores");
  CHECK_THROWS_WITH(amax(x, {2}),
                    "amax: x \"scores\" [2, 3]: dim 2 is out of range for rank 2 (expected -2..1)");
  CHECK_THROWS_WITH(amin(x, {1, -1}),
                    "amin: x \"scores\" [2, 3]: dim 1 appears more than once in the list of dims");
  // torch: amax over a dim of size 0 raises; over the others it gives an empty result.
  CHECK_THROWS_WITH(amax(zeros({0, 3}), 0),
                    "amax: x [0, 3]: cannot take the amax over dim 0 of size 0 (it has no "
                    "identity)");
  CHECK_THROWS_WITH(amin(zeros({0, 3})), Catch::Contains("amin") && Catch::Contains("of size 0"));
  CHECK(amax(zeros({0, 3}), 1).shape() == Shape{0});
}

TEST_CASE("amax, amin: match torch, ties, NaN, ±inf, 0-D and empty outputs included",
          "[amax][amin][goldens]") {
  for (const char* op : {"amax", "amin"}) {
    const bool is_max = std::string(op) == "amax";
    const auto f = [is_max](const Tensor& x, std::initializer_list<int> dims, bool keepdim) {
      return is_max ? amax(x, dims, keepdim) : amin(x, dims, keepdim);
    };
    const std::string o = op;
    testing::check_reduction_goldens(o + "_dim1",
                                     [&](const Tensor& x) { return f(x, {1}, false); });
    testing::check_reduction_goldens(o + "_dim0_keep",
                                     [&](const Tensor& x) { return f(x, {0}, true); });
    testing::check_reduction_goldens(o + "_all", [&](const Tensor& x) { return f(x, {}, false); });
    testing::check_reduction_goldens(o + "_all_nan",
                                     [&](const Tensor& x) { return f(x, {}, false); });
    testing::check_reduction_goldens(o + "_dims02", [&](const Tensor& x) {
      return f(x, {0, -1}, true);
    });
    testing::check_reduction_goldens(o + "_scalar",
                                     [&](const Tensor& x) { return f(x, {0}, false); });
    testing::check_reduction_goldens(o + "_empty_out",
                                     [&](const Tensor& x) { return f(x, {1}, false); });
  }
}

GRADCHECK_TEST_CASE("amax", "ranks 0-4, dim lists, keepdim both ways, distinct values") {
  for (const auto& c : testing::dims_reduction_cases()) {
    INFO(testing::dims_case_text(c));
    auto report = gradcheck(
        "amax", [&](std::span<const Tensor> in) { return amax(in[0], c.dims, c.keepdim); },
        {testing::distinct_reduction_input(c.shape, 21)});
    testing::require_gradcheck(report, "amax");
  }
}

GRADCHECK_TEST_CASE("amin", "ranks 0-4, dim lists, keepdim both ways, distinct values") {
  for (const auto& c : testing::dims_reduction_cases()) {
    INFO(testing::dims_case_text(c));
    auto report = gradcheck(
        "amin", [&](std::span<const Tensor> in) { return amin(in[0], c.dims, c.keepdim); },
        {testing::distinct_reduction_input(c.shape, 22)});
    testing::require_gradcheck(report, "amin");
  }
}
