// Tests for ops/repeat_interleave.cpp: each slice along a dim repeated in place.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/indexing_goldens.h"

using namespace tapegrad;

TEST_CASE("repeat_interleave: torch goldens (each dim, flattened, zero repeats, 0-dim)",
          "[repeat_interleave][goldens]") {
  testing::check_unary_indexing("repeat_interleave",
                                [](const Tensor& x) { return repeat_interleave(x, 2, 0); });
  testing::check_unary_indexing("repeat_interleave_neg",
                                [](const Tensor& x) { return repeat_interleave(x, 3, -1); });
  testing::check_unary_indexing("repeat_interleave_flat",
                                [](const Tensor& x) { return repeat_interleave(x, 2); });
  testing::check_unary_indexing("repeat_interleave_zero",
                                [](const Tensor& x) { return repeat_interleave(x, 0, 1); });
  testing::check_unary_indexing("repeat_interleave_0d",
                                [](const Tensor& x) { return repeat_interleave(x, 3); });
}

TEST_CASE("repeat_interleave: negative repeats and a 0-dim tensor along a dim",
          "[repeat_interleave][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(repeat_interleave(zeros({2}), -1, 0),
                    "repeat_interleave: x [2]: repeats -1 must be non-negative");
  CHECK_THROWS_WITH(repeat_interleave(scalar(1.0), 2, 0),
                    Catch::Contains("cannot repeat a 0-dim tensor along a dim"));
}

GRADCHECK_TEST_CASE("repeat_interleave", "each dim") {
  for (int dim : {0, 1, -1}) {
    INFO(dim);
    auto report =
        gradcheck("repeat_interleave",
                  [dim](std::span<const Tensor> in) { return repeat_interleave(in[0], 3, dim); },
                  {random_input({2, 3, 2}, 1)});
    testing::require_gradcheck(report, "repeat_interleave");
  }
}
