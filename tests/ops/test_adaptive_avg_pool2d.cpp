// Tests for ops/adaptive_avg_pool2d.cpp: torch 1.13's goldens, the errors and a float64 gradient
// check.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/pooling.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/pool_goldens.h"

using namespace tapegrad;

TEST_CASE("adaptive_avg_pool2d: torch goldens (smaller, larger, one, unbatched)",
          "[adaptive_avg_pool2d][goldens]") {
  using testing::check_pool_case;
  check_pool_case("adaptive_avg_pool2d.down", [](const Tensor& x) {
    return adaptive_avg_pool2d(x, {3, 2});
  });
  check_pool_case("adaptive_avg_pool2d.up", [](const Tensor& x) {
    return adaptive_avg_pool2d(x, {5, 7});
  });
  // torch takes x.mean((-1, -2)) for a 1×1 output: its vectorised sum rounds differently.
  check_pool_case(
      "adaptive_avg_pool2d.one", [](const Tensor& x) { return adaptive_avg_pool2d(x, 1); }, 4);
  check_pool_case("adaptive_avg_pool2d.unbatched",
                  [](const Tensor& x) { return adaptive_avg_pool2d(x, 4); });
}

TEST_CASE("adaptive_avg_pool2d: errors name the argument and the shapes",
          "[adaptive_avg_pool2d][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(adaptive_avg_pool2d(zeros({1, 2, 3, 3}), {2, -1}),
                    "adaptive_avg_pool2d: x [1, 2, 3, 3]: output size [2, -1] must be positive");
}

GRADCHECK_TEST_CASE("adaptive_avg_pool2d", "uneven and overlapping windows") {
  auto report = gradcheck("adaptive_avg_pool2d",
                          [](std::span<const Tensor> in) {
                            return adaptive_avg_pool2d(in[0], {3, 4});
                          },
                          {random_input({2, 2, 7, 5}, 9)});
  testing::require_gradcheck(report, "adaptive_avg_pool2d");
}
