// Tests for ops/sort.cpp (sort, argsort) and topk with largest = false (ops/topk.cpp): torch
// goldens from tests/goldens/sorting/make_sorting_goldens.py, bit for bit, ties and NaN included.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/goldens.h"
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

namespace test_sort {

const testing::GoldenFile& goldens() {
  static const testing::GoldenFile golden("sorting", "sorting.txt");
  return golden;
}

using SortOp = std::function<std::pair<Tensor, Ids>(const Tensor&)>;

// torch's values, indices and gradient for its dy, both dtypes.
void check(const std::string& case_name, const SortOp& f) {
  const testing::GoldenFile& golden = goldens();
  for (const auto& [tag, dtype] : testing::golden_dtypes()) {
    const std::string name = case_name + "." + tag;
    INFO(name);
    Tape tape;
    TapeScope scope(tape);
    const testing::GoldenTensor& gx = golden[name + ".x"];
    const Tensor x = from_values(gx.shape, gx.values, dtype, true);
    const auto [values, indices] = f(x);
    const testing::GoldenTensor& want_y = golden[name + ".y"];
    REQUIRE(values.shape() == want_y.shape);
    testing::require_golden(values.values(), want_y, dtype, 0, true, name + ".y");
    const testing::GoldenTensor& want_i = golden[name + ".indices"];
    CHECK(indices.shape() == want_i.shape);
    CHECK(std::vector<int64_t>(indices.values().begin(), indices.values().end()) == want_i.ints());
    const testing::GoldenTensor& dy = golden[name + ".dy"];
    sum(values * from_values(dy.shape, dy.values, dtype)).backward();
    std::vector<double> dx = x.grad_values();
    if (dx.empty()) dx.assign(gx.values.size(), 0.0);
    testing::require_golden(dx, golden[name + ".dx"], dtype, 0, false, name + ".dx");
  }
}

SortOp sorting(int dim, bool descending, bool stable) {
  return [=](const Tensor& x) {
    Sorted s = sort(x, dim, descending, stable);
    // argsort is sort's indices, without recording
    const Ids again = argsort(x, dim, descending, stable);
    CHECK(std::vector<int64_t>(again.values().begin(), again.values().end()) ==
          std::vector<int64_t>(s.indices.values().begin(), s.indices.values().end()));
    return std::pair{s.values, s.indices};
  };
}

SortOp smallest(int64_t k, int dim) {
  return [=](const Tensor& x) {
    TopK t = topk(x, k, dim, false);
    return std::pair{t.values, t.indices};
  };
}

}  // namespace test_sort

TEST_CASE("sort: torch goldens (ties, NaN, stable or not, each direction, dims, 0-dim, empty)",
          "[sort][goldens]") {
  using test_sort::sorting;
  test_sort::check("sort", sorting(-1, false, false));
  test_sort::check("sort_desc", sorting(-1, true, false));
  test_sort::check("sort_stable", sorting(-1, false, true));
  test_sort::check("sort_stable_desc", sorting(-1, true, true));
  test_sort::check("sort_long", sorting(-1, false, false));
  test_sort::check("sort_long_desc", sorting(-1, true, false));
  test_sort::check("sort_long_stable", sorting(-1, false, true));
  test_sort::check("sort_long_stable_desc", sorting(-1, true, true));
  test_sort::check("sort_dim1", sorting(1, false, false));
  test_sort::check("sort_dim0_desc", sorting(0, true, false));
  test_sort::check("sort_0d", sorting(0, false, false));
  test_sort::check("sort_empty", sorting(0, false, false));
}

TEST_CASE("topk with largest = false: torch goldens (ties, NaN last, both algorithms, a dim)",
          "[topk][goldens]") {
  test_sort::check("topk_smallest", test_sort::smallest(3, -1));
  test_sort::check("topk_smallest_partial", test_sort::smallest(3, -1));
  test_sort::check("topk_smallest_dim0", test_sort::smallest(2, 0));
  test_sort::check("topk_smallest_all", test_sort::smallest(5, -1));
}

TEST_CASE("sort and argsort: a dim out of range", "[sort][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros({2, 3});
  CHECK_THROWS_WITH(sort(x, 2), Catch::StartsWith("sort: x [2, 3]: dim 2 is out of range"));
  CHECK_THROWS_WITH(argsort(x, -3), Catch::StartsWith("argsort: x [2, 3]: dim -3 is out of range"));
}

GRADCHECK_TEST_CASE("sort", "each direction, along dim 0 and the last") {
  for (const bool descending : {false, true}) {
    auto report = gradcheck("sort",
                            [descending](std::span<const Tensor> in) {
                              return sort(in[0], 0, descending).values * sort(in[0], -1).values;
                            },
                            {random_input({3, 4}, 1)});
    testing::require_gradcheck(report, "sort");
  }
}
