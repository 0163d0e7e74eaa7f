// Tests for ops/squeeze.cpp: dims of size 1 removed, all or one.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/indexing_goldens.h"

using namespace tapegrad;

TEST_CASE("squeeze: torch goldens (all dims, one dim, a dim kept, 0-dim, zero-size)",
          "[squeeze][goldens]") {
  testing::check_unary_indexing("squeeze", [](const Tensor& x) { return squeeze(x); });
  testing::check_unary_indexing("squeeze_dim1", [](const Tensor& x) { return squeeze(x, 1); });
  testing::check_unary_indexing("squeeze_dim_neg1", [](const Tensor& x) { return squeeze(x, -1); });
  testing::check_unary_indexing("squeeze_dim0_kept", [](const Tensor& x) { return squeeze(x, 0); });
  testing::check_unary_indexing("squeeze_0d", [](const Tensor& x) { return squeeze(x, 0); });
  testing::check_unary_indexing("squeeze_empty", [](const Tensor& x) { return squeeze(x); });
}

TEST_CASE("squeeze: a dim out of range names the op", "[squeeze][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(squeeze(zeros({2, 1}), 2),
                    "squeeze: x [2, 1]: dim 2 is out of range (expected -2..1)");
  CHECK_THROWS_WITH(squeeze(scalar(1.0), 1), Catch::Contains("squeeze: x []: dim 1"));
}

GRADCHECK_TEST_CASE("squeeze", "all dims and one") {
  for (int dim : {-5, 0, 1, 3}) {  // -5: all dims
    INFO(dim);
    auto report = gradcheck("squeeze",
                            [dim](std::span<const Tensor> in) {
                              return dim == -5 ? squeeze(in[0]) : squeeze(in[0], dim);
                            },
                            {random_input({1, 3, 2, 1}, 1)});
    testing::require_gradcheck(report, "squeeze");
  }
}
