// Tests for ops/scatter.cpp: src's elements (or a value) written at an index along a dim.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/indexing_goldens.h"

using namespace tapegrad;

namespace test_scatter {

void check(const std::string& name, int dim) {
  testing::check_indexing_goldens(
      name, {"x", "src"}, {"index"}, [dim](const testing::IndexingInputs& in) {
        return std::vector<Tensor>{scatter(in.t[0], dim, in.ids[0], in.t[1])};
      });
}

}  // namespace test_scatter

TEST_CASE("scatter: torch goldens (each dim, a value, 0-dim)", "[scatter][goldens]") {
  test_scatter::check("scatter", 1);
  test_scatter::check("scatter_dim0", 0);
  test_scatter::check("scatter_0d", 0);
  testing::check_indexing_goldens(
      "scatter_value", {"x"}, {"index"}, [](const testing::IndexingInputs& in) {
        return std::vector<Tensor>{scatter(in.t[0], -1, in.ids[0], 2.5)};
      });
}

TEST_CASE("scatter: a src larger than the index is read in its first positions", "[scatter]") {
  Tape tape;
  TapeScope scope(tape);
  // torch.zeros(2, 3).scatter(1, tensor([[2], [0]]), tensor([[1., 2.], [3., 4.]]))
  Tensor src = requires_grad(tensor({{1.0, 2.0}, {3.0, 4.0}}));
  Tensor y = scatter(zeros({2, 3}), 1, Ids::from_rows({{2}, {0}}), src);
  CHECK(y.values() == std::vector<double>{0, 0, 1, 3, 0, 0});
  sum(y * tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}})).backward();
  CHECK(src.grad_values() == std::vector<double>{3, 0, 4, 0});
}

TEST_CASE("scatter: an index out of range, a src smaller than the index", "[scatter][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros({2, 3});
  CHECK_THROWS_WITH(
      scatter(x, 1, Ids::from_rows({{0}, {3}}), zeros({2, 1})),
      "scatter: x [2, 3]: index 3 at index[1, 0] is out of range for dim 1 of size 3");
  CHECK_THROWS_WITH(scatter(x, 1, Ids::from_rows({{0, 1}, {0, 1}}), zeros({2, 1})),
                    "scatter: x [2, 3], index [2, 2], src [2, 1]: index is larger than src in "
                    "dim 1");
  CHECK_THROWS_WITH(scatter(x, 0, Ids::from_rows({{0}}), zeros({1, 1}, DType::Float64)),
                    Catch::Contains("src [1, 1] is float64"));
}

GRADCHECK_TEST_CASE("scatter", "x and src, and a value") {
  auto report = gradcheck("scatter",
                          [](std::span<const Tensor> in) {
                            return scatter(in[0], 0, Ids::from_rows({{1, 0, 2}, {0, 2, 1}}), in[1]);
                          },
                          {random_input({3, 3}, 1), random_input({2, 3}, 2)});
  testing::require_gradcheck(report, "scatter");
  report = gradcheck("scatter",
                     [](std::span<const Tensor> in) {
                       return scatter(in[0], 1, Ids::from_rows({{1}, {0}}), 0.5);
                     },
                     {random_input({2, 3}, 3)});
  testing::require_gradcheck(report, "scatter");
}
