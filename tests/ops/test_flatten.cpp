// Tests for ops/flatten.cpp: a range of dims merged into one.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/indexing_goldens.h"

using namespace tapegrad;

TEST_CASE("flatten: torch goldens (all dims, a middle range, negative dims, 0-dim, zero-size)",
          "[flatten][goldens]") {
  testing::check_unary_indexing("flatten", [](const Tensor& x) { return flatten(x); });
  testing::check_unary_indexing("flatten_1_2", [](const Tensor& x) { return flatten(x, 1, 2); });
  testing::check_unary_indexing("flatten_neg", [](const Tensor& x) { return flatten(x, -2, -1); });
  testing::check_unary_indexing("flatten_0d", [](const Tensor& x) { return flatten(x); });
  testing::check_unary_indexing("flatten_empty", [](const Tensor& x) { return flatten(x, 0, 1); });
}

TEST_CASE("flatten: dims out of range or out of order", "[flatten][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(flatten(zeros({2, 3, 4}), 2, 1),
                    "flatten: x [2, 3, 4]: start_dim 2 comes after end_dim 1");
  CHECK_THROWS_WITH(flatten(zeros({2, 3}), 0, 2),
                    "flatten: x [2, 3]: dim 2 is out of range (expected -2..1)");
}

GRADCHECK_TEST_CASE("flatten", "ranges of dims") {
  for (const auto& [start, end] : std::vector<std::pair<int, int>>{{0, -1}, {1, 2}, {0, 1}}) {
    INFO(start << ".." << end);
    auto report = gradcheck("flatten",
                            [start = start, end = end](std::span<const Tensor> in) {
                              return flatten(in[0], start, end);
                            },
                            {random_input({2, 3, 2}, 1)});
    testing::require_gradcheck(report, "flatten");
  }
}
