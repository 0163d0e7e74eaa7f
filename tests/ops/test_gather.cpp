// Tests for ops/gather.cpp: elements picked along a dim by an index of x's rank.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/indexing_goldens.h"

using namespace tapegrad;

namespace test_gather {

void check(const std::string& name, int dim) {
  testing::check_indexing_goldens(name, {"x"}, {"index"}, [dim](const testing::IndexingInputs& in) {
    return std::vector<Tensor>{gather(in.t[0], dim, in.ids[0])};
  });
}

}  // namespace test_gather

TEST_CASE("gather: torch goldens (repeats, each dim, a smaller index, rank 3, zero-size, 0-dim)",
          "[gather][goldens]") {
  test_gather::check("gather", 1);
  test_gather::check("gather_dim0", 0);
  test_gather::check("gather_smaller", -2);
  test_gather::check("gather_3d", 2);
  test_gather::check("gather_empty", 0);
  test_gather::check("gather_0d", 0);
}

TEST_CASE("gather: an index out of range, of the wrong rank or too large", "[gather][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros({3, 4});
  CHECK_THROWS_WITH(gather(x, 1, Ids::from_rows({{0, 1}, {2, 4}})),
                    "gather: x [3, 4]: index 4 at index[1, 1] is out of range for dim 1 of size 4");
  CHECK_THROWS_WITH(gather(x, 0, Ids::from_rows({{0, -3}})),
                    Catch::Contains("index -3 at index[0, 1] is out of range for dim 0"));
  CHECK_THROWS_WITH(gather(x, 1, Ids::from_row({0})),
                    "gather: x [3, 4], index [1]: index must have x's rank");
  CHECK_THROWS_WITH(gather(x, 1, Ids(Shape{4, 1}, {0, 0, 0, 0})),
                    "gather: x [3, 4], index [4, 1]: index is larger than x in dim 0");
}

GRADCHECK_TEST_CASE("gather", "repeated indices") {
  auto report = gradcheck("gather",
                          [](std::span<const Tensor> in) {
                            return gather(in[0], 1, Ids::from_rows({{0, 0, 2}, {1, 2, 1}}));
                          },
                          {random_input({3, 3}, 1)});
  testing::require_gradcheck(report, "gather");
}
