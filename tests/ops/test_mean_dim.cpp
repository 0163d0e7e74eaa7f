// Tests for ops/mean_dim.cpp.
#include <cmath>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/reduction_shapes.h"

using namespace tapegrad;

TEST_CASE("mean_dim: small exact cases, negative dims and keepdim", "[mean_dim]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({{1.0, 2.0, 6.0}, {4.0, 5.0, 9.0}});
  Tensor y0 = mean(x, 0);
  CHECK(y0.shape() == Shape{3});
  CHECK(y0.values() == std::vector<double>{2.5, 3.5, 7.5});
  Tensor y1 = mean(x, -1, true);
  CHECK(y1.shape() == Shape{2, 1});
  CHECK(y1.values() == std::vector<double>{3, 6});
  Tensor x3 = tensor({{{1.0, 2.0}, {3.0, 5.0}}}, DType::Float64);  // [1, 2, 2]
  Tensor y3 = mean(x3, 1, true);
  CHECK(y3.shape() == Shape{1, 1, 2});
  CHECK(y3.values() == std::vector<double>{2, 3.5});
}

TEST_CASE("mean_dim: backward spreads dY / n along the dim", "[mean_dim]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = from_values({2, 4}, std::vector<double>(8, 1.0), DType::Float64, true);
  Tensor y = mean(x, 0);
  tape.backward(y, std::vector<double>{2.0, 4.0, 6.0, 8.0});
  CHECK(x.grad_values() == std::vector<double>{1, 2, 3, 4, 1, 2, 3, 4});
}

TEST_CASE("mean_dim: an empty dim gives NaN, as in torch", "[mean_dim]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = mean(zeros({2, 0}), 1);
  REQUIRE(y.shape() == Shape{2});
  CHECK(std::isnan(y.values()[0]));
  CHECK(std::isnan(y.values()[1]));
}

TEST_CASE("mean_dim: an out-of-range dim names the tensor", "[mean_dim][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({4});
  x.set_name("h");
  CHECK_THROWS_WITH(mean(x, -2, true),
                    "mean_dim: x \"h\" [4]: dim -2 is out of range for rank 1 (expected -1..0)");
}

GRADCHECK_TEST_CASE("mean_dim", "ranks 0-4, every dim, keepdim both ways") {
  for (const auto& c : testing::dim_reduction_cases()) {
    INFO("shape " << c.shape.str() << " dim " << c.dim << " keepdim " << c.keepdim);
    auto report = gradcheck(
        "mean_dim", [&](std::span<const Tensor> in) { return mean(in[0], c.dim, c.keepdim); },
        {random_input(c.shape, 12)});
    testing::require_gradcheck(report, "mean_dim");
  }
}
