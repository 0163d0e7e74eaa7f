// Tests for ops/take_along_dim.cpp: gather with broadcasting, or from the flattened tensor.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/indexing_goldens.h"

using namespace tapegrad;

namespace test_take_along_dim {

void check(const std::string& name, std::optional<int> dim) {
  testing::check_indexing_goldens(name, {"x"}, {"index"}, [dim](const testing::IndexingInputs& in) {
    return std::vector<Tensor>{take_along_dim(in.t[0], in.ids[0], dim)};
  });
}

}  // namespace test_take_along_dim

TEST_CASE("take_along_dim: torch goldens (a dim, broadcast indices, flattened, 0-dim)",
          "[take_along_dim][goldens]") {
  test_take_along_dim::check("take_along_dim", 1);
  test_take_along_dim::check("take_along_dim_broadcast", -1);
  test_take_along_dim::check("take_along_dim_flat", std::nullopt);
  test_take_along_dim::check("take_along_dim_0d", std::nullopt);
}

TEST_CASE("take_along_dim: the argmax's values, and errors", "[take_along_dim][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = tensor({{1.0, 5.0, 2.0}, {4.0, 3.0, 0.0}});
  CHECK(take_along_dim(x, argmax(x, 1, true), 1).values() == std::vector<double>{5.0, 4.0});
  CHECK_THROWS_WITH(take_along_dim(x, Ids::from_row({6})),
                    "take_along_dim: x [2, 3]: index 6 at index[0] is out of range for dim 0 of "
                    "size 6");
  CHECK_THROWS_WITH(take_along_dim(x, Ids::from_row({0}), 0),
                    "take_along_dim: x [2, 3]: index [1] must have x's rank 2");
  CHECK_THROWS_WITH(take_along_dim(x, Ids(Shape{3, 1}, {0, 0, 0}), 1),
                    "take_along_dim: x [2, 3]: index [3, 1] does not broadcast with x in dim 0");
}

GRADCHECK_TEST_CASE("gather", "through take_along_dim, with broadcasting") {
  auto report = gradcheck("take_along_dim",
                          [](std::span<const Tensor> in) {
                            return take_along_dim(in[0], Ids::from_rows({{2, 0, 2}}), 1);
                          },
                          {random_input({3, 3}, 1)});
  testing::require_gradcheck(report, "gather");
}
