// Tests for ops/index_select.cpp: slices picked by indices along a dim.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/indexing_goldens.h"

using namespace tapegrad;

namespace test_index_select {

void check(const std::string& name, int dim) {
  testing::check_indexing_goldens(name, {"x"}, {"index"}, [dim](const testing::IndexingInputs& in) {
    return std::vector<Tensor>{index_select(in.t[0], dim, in.ids[0])};
  });
}

}  // namespace test_index_select

TEST_CASE("index_select: torch goldens (repeated indices, a negative dim, none, 0-dim)",
          "[index_select][goldens]") {
  test_index_select::check("index_select", 0);  // index 2 twice: its gradient adds up
  test_index_select::check("index_select_neg", -1);
  test_index_select::check("index_select_none", 1);
  test_index_select::check("index_select_0d", 0);
}

TEST_CASE("index_select: an index out of range is an Error naming it and its position",
          "[index_select][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros({4, 3});
  CHECK_THROWS_WITH(index_select(x, 1, Ids::from_row({0, 3})),
                    "index_select: x [4, 3]: index 3 at index[1] is out of range for dim 1 of "
                    "size 3");
  CHECK_THROWS_WITH(index_select(x, 0, Ids::from_row({-1})),
                    Catch::Contains("index -1 at index[0] is out of range"));
  CHECK_THROWS_WITH(index_select(scalar(1.0), 0, Ids(Shape{0}, {})),
                    "index_select: x []: index [0]: a 0-dim x takes exactly one index, not 0");
  CHECK_THROWS_WITH(index_select(x, 0, Ids::from_rows({{0}})),
                    "index_select: x [4, 3]: index [1, 1] must be 0-dim or 1-dim");
}

GRADCHECK_TEST_CASE("index_select", "repeated indices, each dim") {
  for (int dim : {0, 1, -1}) {
    INFO(dim);
    auto report = gradcheck("index_select",
                            [dim](std::span<const Tensor> in) {
                              return index_select(in[0], dim, Ids::from_row({1, 0, 1}));
                            },
                            {random_input({2, 3, 2}, 1)});
    testing::require_gradcheck(report, "index_select");
  }
}
