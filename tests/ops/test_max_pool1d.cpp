// Tests for ops/max_pool1d.cpp: torch 1.13's goldens, the errors and a float64 gradient check.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/pooling.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/pool_goldens.h"

using namespace tapegrad;

TEST_CASE("max_pool1d: torch goldens (stride, padding, dilation, ceil_mode, ties, NaN, unbatched)",
          "[max_pool1d][goldens]") {
  using testing::check_pool_case;
  check_pool_case("max_pool1d.k3s2p1",
                  [](const Tensor& x) { return max_pool1d_with_indices(x, 3, 2, 1); });
  check_pool_case("max_pool1d.dilation_ceil",
                  [](const Tensor& x) { return max_pool1d_with_indices(x, 2, 2, 0, 3, true); });
  check_pool_case("max_pool1d.ties",
                  [](const Tensor& x) { return max_pool1d_with_indices(x, 3, 1, 1); });
  check_pool_case("max_pool1d.nan",
                  [](const Tensor& x) { return max_pool1d_with_indices(x, 4, 3); });
  check_pool_case("max_pool1d.unbatched", [](const Tensor& x) { return max_pool1d(x, 2); });
}

TEST_CASE("max_pool1d: errors name the argument and the shapes", "[max_pool1d][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(max_pool1d(zeros({1, 2, 3}), 4),
                    "max_pool1d: x [1, 2, 3]: kernel_size 4 is larger than the input 3 with "
                    "padding 0: the output size would be 0");
  CHECK_THROWS_WITH(max_pool1d(zeros({1, 2, 3}), 3, 1, 2),
                    "max_pool1d: x [1, 2, 3]: padding 2 is more than half of kernel_size 3");
  CHECK_THROWS_WITH(max_pool1d(zeros({1, 1, 2, 3}), 2),
                    "max_pool1d: x [1, 1, 2, 3]: expected a 2-D (unbatched) or 3-D (batched) "
                    "input, [N, C, L] or [C, L], got rank 4");
}

GRADCHECK_TEST_CASE("max_pool1d", "stride, padding, dilation, unbatched") {
  auto report = gradcheck(
      "max_pool1d", [](std::span<const Tensor> in) { return max_pool1d(in[0], 3, 2, 1, 2, true); },
      {testing::pool_distinct_input({2, 2, 9}, 3)});
  testing::require_gradcheck(report, "max_pool1d");
  report = gradcheck("max_pool1d", [](std::span<const Tensor> in) { return max_pool1d(in[0], 2); },
                     {testing::pool_distinct_input({3, 8}, 4)});
  testing::require_gradcheck(report, "max_pool1d");
}
