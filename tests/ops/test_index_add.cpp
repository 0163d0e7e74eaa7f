// Tests for ops/index_add.cpp: alpha times source's slices added at indices along a dim.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/indexing_goldens.h"

using namespace tapegrad;

namespace test_index_add {

void check(const std::string& name, int dim, double alpha = 1.0) {
  testing::check_indexing_goldens(
      name, {"x", "src"}, {"index"}, [dim, alpha](const testing::IndexingInputs& in) {
        return std::vector<Tensor>{index_add(in.t[0], dim, in.ids[0], in.t[1], alpha)};
      });
}

}  // namespace test_index_add

TEST_CASE("index_add: torch goldens (repeated indices add up, alpha, no indices, 0-dim)",
          "[index_add][goldens]") {
  test_index_add::check("index_add", 0);
  test_index_add::check("index_add_alpha", -1, 2.0);
  test_index_add::check("index_add_empty", 0);
  test_index_add::check("index_add_0d", 0);
}

TEST_CASE("index_add: a source of the wrong shape, an index out of range", "[index_add][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros({5, 3});
  CHECK_THROWS_WITH(index_add(x, 0, Ids::from_row({0, 1}), zeros({3, 3})),
                    "index_add: x [5, 3], index [2], source [3, 3]: source must be x's shape "
                    "with dim 0 the number of indices (2)");
  CHECK_THROWS_WITH(index_add(x, 0, Ids::from_row({0, 5}), zeros({2, 3})),
                    "index_add: x [5, 3]: index 5 at index[1] is out of range for dim 0 of size 5");
}

GRADCHECK_TEST_CASE("index_add", "repeated indices and alpha") {
  auto report = gradcheck("index_add",
                          [](std::span<const Tensor> in) {
                            return index_add(in[0], 1, Ids::from_row({2, 0, 2}), in[1], -1.5);
                          },
                          {random_input({2, 3}, 1), random_input({2, 3}, 2)});
  testing::require_gradcheck(report, "index_add");
}
