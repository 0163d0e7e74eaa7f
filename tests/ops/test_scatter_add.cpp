// Tests for ops/scatter_add.cpp: src's elements added at an index along a dim.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/indexing_goldens.h"

using namespace tapegrad;

namespace test_scatter_add {

void check(const std::string& name, int dim) {
  testing::check_indexing_goldens(
      name, {"x", "src"}, {"index"}, [dim](const testing::IndexingInputs& in) {
        return std::vector<Tensor>{scatter_add(in.t[0], dim, in.ids[0], in.t[1])};
      });
}

}  // namespace test_scatter_add

TEST_CASE("scatter_add: torch goldens (repeated positions add up, each dim, zero-size, 0-dim)",
          "[scatter_add][goldens]") {
  test_scatter_add::check("scatter_add", 1);
  test_scatter_add::check("scatter_add_dim0", 0);
  test_scatter_add::check("scatter_add_empty", 1);
  test_scatter_add::check("scatter_add_0d", 0);
}

TEST_CASE("scatter_add: an index out of range names it", "[scatter_add][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(scatter_add(zeros({2, 3}), 0, Ids::from_rows({{0, 2}}), zeros({1, 2})),
                    "scatter_add: x [2, 3]: index 2 at index[0, 1] is out of range for dim 0 of "
                    "size 2");
}

GRADCHECK_TEST_CASE("scatter_add", "repeated positions") {
  auto report =
      gradcheck("scatter_add",
                [](std::span<const Tensor> in) {
                  return scatter_add(in[0], 1, Ids::from_rows({{0, 0, 2}, {1, 1, 1}}), in[1]);
                },
                {random_input({2, 3}, 1), random_input({2, 4}, 2)});
  testing::require_gradcheck(report, "scatter_add");
}
