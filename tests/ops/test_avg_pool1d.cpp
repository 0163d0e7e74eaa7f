// Tests for ops/avg_pool1d.cpp: torch 1.13's goldens, the errors and a float64 gradient check.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/pooling.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/pool_goldens.h"

using namespace tapegrad;

TEST_CASE("avg_pool1d: torch goldens (stride, padding, count_include_pad, ceil_mode, unbatched)",
          "[avg_pool1d][goldens]") {
  using testing::check_pool_case;
  check_pool_case("avg_pool1d.k3s2p1", [](const Tensor& x) { return avg_pool1d(x, 3, 2, 1); });
  check_pool_case("avg_pool1d.exclude_pad",
                  [](const Tensor& x) { return avg_pool1d(x, 3, 2, 1, false, false); });
  check_pool_case("avg_pool1d.ceil", [](const Tensor& x) { return avg_pool1d(x, 4, 3, 1, true); });
  check_pool_case("avg_pool1d.unbatched", [](const Tensor& x) { return avg_pool1d(x, 2); });
}

TEST_CASE("avg_pool1d: errors name the argument and the shapes", "[avg_pool1d][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(avg_pool1d(zeros({2, 3}), 2, 0),
                    "avg_pool1d: x [2, 3]: stride 0 must be positive");
  CHECK_THROWS_WITH(avg_pool1d(zeros({4}), 2),
                    "avg_pool1d: x [4]: expected a 2-D (unbatched) or 3-D (batched) input, "
                    "[N, C, L] or [C, L], got rank 1");
}

GRADCHECK_TEST_CASE("avg_pool1d", "padding, count_include_pad, ceil mode") {
  auto report =
      gradcheck("avg_pool1d",
                [](std::span<const Tensor> in) { return avg_pool1d(in[0], 3, 2, 1, true, false); },
                {random_input({2, 2, 8}, 7)});
  testing::require_gradcheck(report, "avg_pool1d");
}
