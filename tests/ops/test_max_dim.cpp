// Tests for ops/max_dim.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/reduction_shapes.h"

using namespace tapegrad;

namespace {
// A random permutation of 0.1, 0.2, ...: no ties, and gaps far wider than gradcheck's step.
GradcheckInput distinct_input(const Shape& shape, uint64_t seed) {
  GradcheckInput in = random_input(shape, seed);
  std::vector<size_t> order(in.values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return in.values[a] < in.values[b]; });
  for (size_t r = 0; r < order.size(); ++r) in.values[order[r]] = 0.1 * static_cast<double>(r + 1);
  return in;
}
}  // namespace

TEST_CASE("max_dim: small exact cases, negative dims and keepdim", "[max_dim]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({{1.0, 7.0, 3.0}, {8.0, -5.0, 6.0}});
  Tensor y0 = max(x, 0);
  CHECK(y0.shape() == Shape{3});
  CHECK(y0.values() == std::vector<double>{8, 7, 6});
  Tensor y1 = max(x, -1, true);
  CHECK(y1.shape() == Shape{2, 1});
  CHECK(y1.values() == std::vector<double>{7, 8});
}

TEST_CASE("max_dim: backward sends dY to the arg max", "[max_dim]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = from_values({2, 3}, std::vector<double>{1, 7, 3, 8, -5, 6}, DType::Float64, true);
  Tensor y = max(x, 0);
  tape.backward(y, std::vector<double>{10.0, 20.0, 30.0});
  CHECK(x.grad_values() == std::vector<double>{0, 20, 0, 10, 0, 30});
}

TEST_CASE("max_dim: on ties the first maximum gets the gradient, as torch 1.13 CPU", "[max_dim]") {
  {
    Tape tape;
    TapeScope scope(tape);
    // torch: x.max(1) -> values [3, 2], indices [1, 0]
    Tensor x =
        from_values({2, 4}, std::vector<double>{1, 3, 3, 0, 2, 2, 2, 2}, DType::Float64, true);
    Tensor y = max(x, 1);
    CHECK(y.values() == std::vector<double>{3, 2});
    tape.backward(y, std::vector<double>{1.0, 1.0});
    CHECK(x.grad_values() == std::vector<double>{0, 1, 0, 0, 1, 0, 0, 0});
  }
  {
    Tape tape;
    TapeScope scope(tape);
    // torch: [[1, 5], [5, 5], [5, 1]].max(0) -> values [5, 5], indices [1, 0]
    Tensor x = from_values({3, 2}, std::vector<double>{1, 5, 5, 5, 5, 1}, DType::Float64, true);
    Tensor y = max(x, 0);
    CHECK(y.values() == std::vector<double>{5, 5});
    tape.backward(y, std::vector<double>{1.0, 2.0});
    CHECK(x.grad_values() == std::vector<double>{0, 2, 1, 0, 0, 0});
  }
}

TEST_CASE("max_dim: a NaN is the maximum, as in torch", "[max_dim]") {
  Tape tape;
  TapeScope scope(tape);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor y = max(from_values({4}, std::vector<double>{1, nan, 3, 2}, DType::Float64), 0);
  CHECK(std::isnan(y.item()));
}

TEST_CASE("max_dim: rank-0 input reduces to itself", "[max_dim]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK(max(scalar(2.5), 0).item() == 2.5);
  CHECK(max(scalar(2.5), -1, true).shape() == Shape{});
}

TEST_CASE("max_dim: errors name the tensor", "[max_dim][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 3});
  x.set_name("scores");
  CHECK_THROWS_WITH(max(x, 2),
                    "max_dim: x \"scores\" [2, 3]: dim 2 is out of range for rank 2 "
                    "(expected -2..1)");
  CHECK_THROWS_WITH(max(zeros({2, 0}), 1),
                    "max_dim: x [2, 0]: cannot take the max along dim 1 of size 0");
}

GRADCHECK_TEST_CASE("max_dim", "ranks 0-4, every dim, keepdim both ways, distinct values") {
  for (const auto& c : testing::dim_reduction_cases()) {
    INFO("shape " << c.shape.str() << " dim " << c.dim << " keepdim " << c.keepdim);
    auto report = gradcheck(
        "max_dim", [&](std::span<const Tensor> in) { return max(in[0], c.dim, c.keepdim); },
        {distinct_input(c.shape, 13)});
    testing::require_gradcheck(report, "max_dim");
  }
}
