// Tests for ops/unsqueeze.cpp: a dim of size 1 inserted.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/indexing_goldens.h"

using namespace tapegrad;

TEST_CASE("unsqueeze: torch goldens (front, middle, end, 0-dim, zero-size)",
          "[unsqueeze][goldens]") {
  testing::check_unary_indexing("unsqueeze_dim0", [](const Tensor& x) { return unsqueeze(x, 0); });
  testing::check_unary_indexing("unsqueeze_dim1", [](const Tensor& x) { return unsqueeze(x, 1); });
  testing::check_unary_indexing("unsqueeze_dim_neg1",
                                [](const Tensor& x) { return unsqueeze(x, -1); });
  testing::check_unary_indexing("unsqueeze_0d", [](const Tensor& x) { return unsqueeze(x, 0); });
  testing::check_unary_indexing("unsqueeze_empty", [](const Tensor& x) { return unsqueeze(x, 1); });
}

TEST_CASE("unsqueeze: a dim out of range and a result above the maximum rank",
          "[unsqueeze][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(unsqueeze(zeros({2, 3}), 3),
                    "unsqueeze: x [2, 3]: dim 3 is out of range (expected -3..2)");
  CHECK_THROWS_WITH(unsqueeze(zeros({2, 3}), -4), Catch::Contains("dim -4 is out of range"));
  CHECK_THROWS_WITH(unsqueeze(zeros({1, 2, 3, 4, 1, 1, 2, 1}), 0),
                    "unsqueeze: x [1, 2, 3, 4, 1, 1, 2, 1]: the result would have rank 9, above "
                    "the maximum of 8");
}

GRADCHECK_TEST_CASE("unsqueeze", "every position") {
  for (int dim : {0, 1, 2, -1}) {
    INFO(dim);
    auto report =
        gradcheck("unsqueeze", [dim](std::span<const Tensor> in) { return unsqueeze(in[0], dim); },
                  {random_input({2, 3}, 1)});
    testing::require_gradcheck(report, "unsqueeze");
  }
}
