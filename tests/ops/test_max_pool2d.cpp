// Tests for ops/max_pool2d.cpp: torch 1.13's goldens (values, indices, gradients), the errors and
// a float64 gradient check.
#include <cmath>
#include <limits>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/pooling.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/pool_goldens.h"

using namespace tapegrad;

TEST_CASE("max_pool2d: torch goldens (stride, padding, dilation, ceil_mode, ties, NaN, unbatched)",
          "[max_pool2d][goldens]") {
  using testing::check_pool_case;
  check_pool_case("max_pool2d.k2", [](const Tensor& x) { return max_pool2d_with_indices(x, 2); });
  check_pool_case("max_pool2d.k3s2p1",
                  [](const Tensor& x) { return max_pool2d_with_indices(x, 3, 2, 1); });
  check_pool_case("max_pool2d.dilation", [](const Tensor& x) {
    return max_pool2d_with_indices(x, {3, 2}, Size2{1, 2}, {1, 0}, {2, 1});
  });
  check_pool_case("max_pool2d.ceil",
                  [](const Tensor& x) { return max_pool2d_with_indices(x, 3, 2, 0, 1, true); });
  check_pool_case("max_pool2d.ceil_pad",
                  [](const Tensor& x) { return max_pool2d_with_indices(x, 2, 2, 1, 1, true); });
  check_pool_case("max_pool2d.ties",
                  [](const Tensor& x) { return max_pool2d_with_indices(x, 3, 1, 1); });
  check_pool_case("max_pool2d.nan",
                  [](const Tensor& x) { return max_pool2d_with_indices(x, 3, 2, 1); });
  check_pool_case("max_pool2d.unbatched",
                  [](const Tensor& x) { return max_pool2d_with_indices(x, 2, 1); });
  // Without indices: the same values.
  check_pool_case("max_pool2d.k3s2p1", [](const Tensor& x) { return max_pool2d(x, 3, 2, 1); });
}

TEST_CASE("max_pool2d: the first maximum of a tie and the last NaN of a window get dY",
          "[max_pool2d]") {
  Tape tape;
  TapeScope scope(tape);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = from_values({1, 1, 2, 4}, std::vector<double>{5, 1, nan, 2, 5, 5, 3, nan},
                         DType::Float64, true);
  PoolWithIndices y = max_pool2d_with_indices(x, 2);
  CHECK(y.values.shape() == Shape{1, 1, 1, 2});
  CHECK(y.values.values()[0] == 5.0);
  CHECK(std::isnan(y.values.values()[1]));
  CHECK(std::vector<int64_t>(y.indices.values().begin(), y.indices.values().end()) ==
        std::vector<int64_t>{0, 7});
  tape.backward(y.values, std::vector<double>{1.0, 2.0});
  CHECK(x.grad_values() == std::vector<double>{1, 0, 0, 0, 0, 0, 0, 2});
}

TEST_CASE("max_pool2d: errors name the argument and the shapes", "[max_pool2d][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros({1, 1, 2, 2});
  CHECK_THROWS_WITH(max_pool2d(x, 3),
                    "max_pool2d: x [1, 1, 2, 2]: kernel_size [3, 3] is larger than the input "
                    "[2, 2] with padding [0, 0]: the output size would be [0, 0]");
  CHECK_THROWS_WITH(max_pool2d(x, 2, 1, 0, 2),
                    "max_pool2d: x [1, 1, 2, 2]: kernel_size [2, 2] with dilation [2, 2] is "
                    "larger than the input [2, 2] with padding [0, 0]: the output size would be "
                    "[0, 0]");
  CHECK_THROWS_WITH(max_pool2d(x, 2, 2, 2),
                    "max_pool2d: x [1, 1, 2, 2]: padding [2, 2] is more than half of "
                    "kernel_size [2, 2]");
  CHECK_THROWS_WITH(max_pool2d(x, {0, 2}),
                    "max_pool2d: x [1, 1, 2, 2]: kernel_size [0, 2] must be positive");
  CHECK_THROWS_WITH(max_pool2d(x, 2, Size2{1, 0}),
                    "max_pool2d: x [1, 1, 2, 2]: stride [1, 0] must be positive");
  CHECK_THROWS_WITH(max_pool2d(x, 2, 1, -1),
                    "max_pool2d: x [1, 1, 2, 2]: padding [-1, -1] must not be negative");
  CHECK_THROWS_WITH(max_pool2d(zeros({2, 2}), 2),
                    "max_pool2d: x [2, 2]: expected a 3-D (unbatched) or 4-D (batched) input, "
                    "[N, C, H, W] or [C, H, W], got rank 2");
  CHECK_THROWS_WITH(max_pool2d(zeros({1, 0, 2, 2}), 2),
                    "max_pool2d: x [1, 0, 2, 2]: its dims other than the batch dim must not be 0");
  // A window in ceil mode may run past the input (torch gives [1, 1] here).
  CHECK(max_pool2d(x, 3, 3, 0, 1, true).shape() == Shape{1, 1, 1, 1});
  // An empty batch is allowed, as in torch.
  CHECK(max_pool2d(zeros({0, 1, 2, 2}), 2).shape() == Shape{0, 1, 1, 1});
}

GRADCHECK_TEST_CASE("max_pool2d", "stride, padding, dilation, ceil mode, unbatched") {
  const auto check = [](const Shape& shape, const std::function<Tensor(const Tensor&)>& f) {
    auto report = gradcheck("max_pool2d", [&](std::span<const Tensor> in) { return f(in[0]); },
                            {testing::pool_distinct_input(shape, 21)});
    testing::require_gradcheck(report, "max_pool2d");
  };
  check({2, 2, 5, 6}, [](const Tensor& x) { return max_pool2d(x, 2); });
  check({1, 2, 6, 5}, [](const Tensor& x) { return max_pool2d(x, 3, 2, 1, 1, true); });
  check({1, 1, 7, 6}, [](const Tensor& x) {
    return max_pool2d(x, {3, 2}, Size2{1, 2}, 1, {2, 1});
  });
  check({2, 4, 4}, [](const Tensor& x) { return max_pool2d(x, 2, 1); });
}
