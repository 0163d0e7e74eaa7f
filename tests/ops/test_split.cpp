// Tests for ops/split.cpp: split, chunk and unbind, pieces of x along a dim (narrow and select).
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/indexing_goldens.h"

using namespace tapegrad;

namespace test_split {

void check(const std::string& name, const std::function<std::vector<Tensor>(const Tensor&)>& f) {
  testing::check_indexing_goldens(name, {"x"}, {},
                                  [&](const testing::IndexingInputs& in) { return f(in.t[0]); });
}

}  // namespace test_split

TEST_CASE("split, chunk, unbind: torch goldens (sizes, a short last piece, zero-size)",
          "[split][chunk][unbind][goldens]") {
  test_split::check("split", [](const Tensor& x) { return split(x, 2); });
  test_split::check("split_sizes", [](const Tensor& x) { return split(x, {1, 3, 1}); });
  test_split::check("split_neg", [](const Tensor& x) { return split(x, 3, -1); });
  test_split::check("split_empty", [](const Tensor& x) { return split(x, 2, 0); });
  test_split::check("chunk", [](const Tensor& x) { return chunk(x, 3); });
  test_split::check("chunk_fewer", [](const Tensor& x) { return chunk(x, 4); });  // 3 pieces
  test_split::check("chunk_neg", [](const Tensor& x) { return chunk(x, 2, -1); });
  test_split::check("unbind", [](const Tensor& x) { return unbind(x); });
  test_split::check("unbind_neg", [](const Tensor& x) { return unbind(x, -1); });
}

TEST_CASE("split, chunk, unbind: sizes that do not fit and 0-dim tensors", "[split][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros({5, 2});
  CHECK_THROWS_WITH(split(x, {2, 2}),
                    "split: x [5, 2]: split_sizes [2, 2] add up to 4, not to size 5 of dim 0");
  CHECK_THROWS_WITH(split(x, {6, -1}), Catch::Contains("has a negative size"));
  CHECK_THROWS_WITH(split(x, 0), "split: x [5, 2]: split_size 0 cannot split dim 0 of size 5");
  CHECK_THROWS_WITH(split(scalar(1.0), 1), "split: x []: expects a tensor of at least one dim");
  CHECK_THROWS_WITH(chunk(x, 0), "chunk: x [5, 2]: chunks 0 must be positive");
  CHECK_THROWS_WITH(unbind(scalar(1.0)), "unbind: x []: expects a tensor of at least one dim");
  CHECK(chunk(zeros({0, 2}), 3).size() == 3);  // torch: `chunks` empty pieces
  CHECK(split(zeros({0, 2}), 2).size() == 1);
}

GRADCHECK_TEST_CASE("narrow", "through split and chunk") {
  auto report = gradcheck("split",
                          [](std::span<const Tensor> in) {
                            const std::vector<Tensor> p = split(in[0], {1, 2}, 1);
                            const std::vector<Tensor> q = chunk(in[0], 2, 0);
                            return sum(p[0] * p[0]) + sum(p[1]) + sum(q[1] * q[0]);
                          },
                          {random_input({2, 3}, 1)});
  testing::require_gradcheck(report, "narrow");
}

GRADCHECK_TEST_CASE("select", "through unbind") {
  auto report = gradcheck("unbind",
                          [](std::span<const Tensor> in) {
                            const std::vector<Tensor> rows = unbind(in[0], 1);
                            return rows[0] * rows[2] + rows[1];
                          },
                          {random_input({2, 3}, 1)});
  testing::require_gradcheck(report, "select");
}
