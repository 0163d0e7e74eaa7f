// Tests for ops/adaptive_max_pool2d.cpp: torch 1.13's goldens, the errors and a float64 gradient
// check.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/pooling.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/pool_goldens.h"

using namespace tapegrad;

TEST_CASE("adaptive_max_pool2d: torch goldens (uneven windows, ties, unbatched)",
          "[adaptive_max_pool2d][goldens]") {
  using testing::check_pool_case;
  check_pool_case("adaptive_max_pool2d.down", [](const Tensor& x) {
    return adaptive_max_pool2d_with_indices(x, {3, 2});
  });
  check_pool_case("adaptive_max_pool2d.ties", [](const Tensor& x) {
    return adaptive_max_pool2d_with_indices(x, {4, 3});
  });
  check_pool_case("adaptive_max_pool2d.unbatched",
                  [](const Tensor& x) { return adaptive_max_pool2d(x, 4); });
}

TEST_CASE("adaptive_max_pool2d: errors name the argument and the shapes",
          "[adaptive_max_pool2d][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(adaptive_max_pool2d(zeros({1, 2, 3, 3}), {0, 2}),
                    "adaptive_max_pool2d: x [1, 2, 3, 3]: output size [0, 2] must be positive");
  CHECK_THROWS_WITH(adaptive_max_pool2d(zeros({3}), 1),
                    "adaptive_max_pool2d: x [3]: expected a 3-D (unbatched) or 4-D (batched) "
                    "input, [N, C, H, W] or [C, H, W], got rank 1");
}

GRADCHECK_TEST_CASE("adaptive_max_pool2d", "uneven and overlapping windows") {
  auto report = gradcheck("adaptive_max_pool2d",
                          [](std::span<const Tensor> in) {
                            return adaptive_max_pool2d(in[0], {3, 4});
                          },
                          {testing::pool_distinct_input({2, 2, 7, 5}, 5)});
  testing::require_gradcheck(report, "adaptive_max_pool2d");
}
