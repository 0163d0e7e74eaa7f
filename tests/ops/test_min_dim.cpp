// Tests for ops/min_dim.cpp (min along a dim).
#include <cmath>
#include <limits>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/reduction_shapes.h"
#include "tests/ops/reductions2_goldens.h"

using namespace tapegrad;

TEST_CASE("min_dim: values, keepdim, the first minimum gets the gradient", "[min_dim]") {
  Tape tape;
  TapeScope scope(tape);
  // torch: [[3, 1, 1, 0, 0], [2, 2, 5, 7, 9]].min(1) -> values [0, 2], indices [3, 0]
  Tensor x =
      requires_grad(tensor({{3.0, 1.0, 1.0, 0.0, 0.0}, {2.0, 2.0, 5.0, 7.0, 9.0}}, DType::Float64));
  Tensor y = min(x, 1);
  CHECK(y.values() == std::vector<double>{0.0, 2.0});
  CHECK(min(x, 0, true).shape() == Shape{1, 5});
  tape.backward(y, std::vector<double>{1.0, 2.0});
  CHECK(x.grad_values() == std::vector<double>{0, 0, 0, 1, 0, 2, 0, 0, 0, 0});
}

TEST_CASE("min_dim: a NaN is the minimum, a 0-D input reduces to itself, errors", "[min_dim]") {
  Tape tape;
  TapeScope scope(tape);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(std::isnan(min(tensor({1.0, nan, -3.0}, DType::Float64), 0).item()));
  CHECK(min(scalar(2.5), -1).item() == 2.5);
  CHECK(min(zeros({0, 3}), 1).shape() == Shape{0});
  CHECK_THROWS_WITH(min(zeros({0, 3}), 0),
                    "min_dim: x [0, 3]: cannot take the min along dim 0 of size 0");
  CHECK_THROWS_WITH(min(zeros({2, 3}), -3),
                    Catch::Contains("min_dim") && Catch::Contains("dim -3 is out of range"));
}

TEST_CASE("min_dim: matches torch, ties, NaN, ±inf, 0-D and empty outputs", "[min_dim][goldens]") {
  testing::check_reduction_goldens("min_dim1", [](const Tensor& x) { return min(x, 1); });
  testing::check_reduction_goldens("min_dim0_keep",
                                   [](const Tensor& x) { return min(x, 0, true); });
  testing::check_reduction_goldens("min_dim_scalar", [](const Tensor& x) { return min(x, 0); });
  testing::check_reduction_goldens("min_dim_empty_out", [](const Tensor& x) { return min(x, 1); });
}

GRADCHECK_TEST_CASE("min_dim", "ranks 0-4, every dim, keepdim both ways, distinct values") {
  for (const auto& c : testing::dim_reduction_cases()) {
    INFO("shape " << c.shape.str() << " dim " << c.dim << " keepdim " << c.keepdim);
    auto report = gradcheck(
        "min_dim", [&](std::span<const Tensor> in) { return min(in[0], c.dim, c.keepdim); },
        {testing::distinct_reduction_input(c.shape, 25)});
    testing::require_gradcheck(report, "min_dim");
  }
}
