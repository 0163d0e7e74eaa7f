// Tests for ops/max_min.cpp (max and min of all elements).
#include <cmath>
#include <limits>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/reductions2_goldens.h"

using namespace tapegrad;

TEST_CASE("max, min of all elements: ties split the gradient evenly", "[max][min]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({{1.0, 5.0, 2.0}, {5.0, -3.0, -3.0}}, DType::Float64));
  Tensor hi = max(x), lo = min(x);
  CHECK(hi.shape() == Shape{});
  CHECK(hi.item() == 5.0);
  CHECK(lo.item() == -3.0);
  tape.backward(hi + lo * 4.0);
  CHECK(x.grad_values() == std::vector<double>{0.0, 0.5, 0.0, 0.5, 2.0, 2.0});
}

TEST_CASE("max of all elements: NaN wins, the NaNs share the gradient, errors", "[max][min]") {
  Tape tape;
  TapeScope scope(tape);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = requires_grad(tensor({1.0, nan, 3.0, nan}, DType::Float64));
  Tensor y = max(x);
  CHECK(std::isnan(y.item()));
  // The recorded backward agrees with torch: [0, 0.5, 0, 0.5].
  CHECK(grad(y, {x}, {.retain_graph = true})[0].values() ==
        std::vector<double>{0.0, 0.5, 0.0, 0.5});
  y.backward();
  CHECK(x.grad_values() == std::vector<double>{0.0, 0.5, 0.0, 0.5});
  Tensor empty = zeros({0, 3});
  empty.set_name("e");
  CHECK_THROWS_WITH(max(empty),
                    "max: x \"e\" [0, 3]: cannot take the max of an empty tensor (it "
                    "has no identity; reduce along a dim instead)");
  CHECK_THROWS_WITH(min(empty), Catch::Contains("min: x \"e\" [0, 3]"));
}

TEST_CASE("max, min of all elements: match torch, ties, NaN, ±inf and 0-D", "[max][min][goldens]") {
  for (const char* suffix : {"_all_ties", "_all_nan", "_all_inf", "_all_scalar"}) {
    testing::check_reduction_goldens(std::string("max") + suffix,
                                     [](const Tensor& x) { return max(x); });
    testing::check_reduction_goldens(std::string("min") + suffix,
                                     [](const Tensor& x) { return min(x); });
  }
}

GRADCHECK_TEST_CASE("max", "ranks 0-3, distinct values") {
  for (const Shape& shape : {Shape{}, Shape{5}, Shape{3, 4}, Shape{2, 3, 2}}) {
    auto report = gradcheck("max", [](std::span<const Tensor> in) { return max(in[0]); },
                            {testing::distinct_reduction_input(shape, 23)});
    testing::require_gradcheck(report, "max");
  }
}

GRADCHECK_TEST_CASE("min", "ranks 0-3, distinct values") {
  for (const Shape& shape : {Shape{}, Shape{5}, Shape{3, 4}, Shape{2, 3, 2}}) {
    auto report = gradcheck("min", [](std::span<const Tensor> in) { return min(in[0]); },
                            {testing::distinct_reduction_input(shape, 24)});
    testing::require_gradcheck(report, "min");
  }
}
