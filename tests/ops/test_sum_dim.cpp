// Tests for ops/sum_dim.cpp.
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/reduction_shapes.h"

using namespace tapegrad;

TEST_CASE("sum_dim: small exact cases, negative dims and keepdim", "[sum_dim]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  Tensor y0 = sum(x, 0);
  CHECK(y0.shape() == Shape{3});
  CHECK(y0.values() == std::vector<double>{5, 7, 9});
  Tensor y1 = sum(x, -1, true);
  CHECK(y1.shape() == Shape{2, 1});
  CHECK(y1.values() == std::vector<double>{6, 15});
  CHECK(sum(x, 1).shape() == Shape{2});
}

TEST_CASE("sum_dim: a middle dim of a rank-4 tensor", "[sum_dim]") {
  Tape tape;
  TapeScope scope(tape);
  std::vector<double> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);  // x[a][b][c][d]
  Tensor x = from_values({2, 3, 2, 2}, v, DType::Float64);
  Tensor y = sum(x, 1);
  CHECK(y.shape() == Shape{2, 2, 2});
  // y[a][c][d] = Σ_b (12a + 4b + 2c + d) = 36a + 12 + 6c + 3d
  std::vector<double> expected;
  for (int a = 0; a < 2; ++a) {
    for (int c = 0; c < 2; ++c) {
      for (int d = 0; d < 2; ++d) expected.push_back(36 * a + 12 + 6 * c + 3 * d);
    }
  }
  CHECK(y.values() == expected);
}

TEST_CASE("sum_dim: backward broadcasts dY along the dim", "[sum_dim]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = from_values({2, 3}, std::vector<double>(6, 1.0), DType::Float64, true);
  Tensor y = sum(x, 1);
  tape.backward(y, std::vector<double>{10.0, 20.0});
  CHECK(x.grad_values() == std::vector<double>{10, 10, 10, 20, 20, 20});
}

TEST_CASE("sum_dim: float32 sums along a long dim keep their precision", "[sum_dim]") {
  Tape tape;
  TapeScope scope(tape);
  const int64_t n = 1000003;
  // 0.1f summed n times, correctly rounded to float (torch's cascade sum gives the same).
  Tensor y = sum(full({n}, 0.1, DType::Float32), 0);
  CHECK(y.item() == 100000.3046875);
  Tensor x = full({n, 2}, 0.1, DType::Float32);
  CHECK(sum(x, 0).values() == std::vector<double>{100000.3046875, 100000.3046875});
}

TEST_CASE("sum_dim: an out-of-range dim names the tensor", "[sum_dim][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 3});
  CHECK_THROWS_WITH(sum(x, 2),
                    "sum_dim: x [2, 3]: dim 2 is out of range for rank 2 (expected -2..1)");
}

GRADCHECK_TEST_CASE("sum_dim", "ranks 0-4, every dim, keepdim both ways") {
  for (const auto& c : testing::dim_reduction_cases()) {
    INFO("shape " << c.shape.str() << " dim " << c.dim << " keepdim " << c.keepdim);
    auto report = gradcheck(
        "sum_dim", [&](std::span<const Tensor> in) { return sum(in[0], c.dim, c.keepdim); },
        {random_input(c.shape, 11)});
    testing::require_gradcheck(report, "sum_dim");
  }
}
