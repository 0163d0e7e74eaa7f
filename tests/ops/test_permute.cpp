// Tests for ops/permute.cpp: dims in any order.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/indexing_goldens.h"

using namespace tapegrad;

TEST_CASE("permute: torch goldens (ranks 0 to 4, negative dims, zero-size)", "[permute][goldens]") {
  testing::check_unary_indexing("permute", [](const Tensor& x) { return permute(x, {2, 0, 1}); });
  testing::check_unary_indexing("permute_neg", [](const Tensor& x) {
    return permute(x, {-1, -3, -2});
  });
  testing::check_unary_indexing("permute_4d", [](const Tensor& x) {
    return permute(x, {3, 1, 0, 2});
  });
  testing::check_unary_indexing("permute_0d", [](const Tensor& x) { return permute(x, {}); });
  testing::check_unary_indexing("permute_empty", [](const Tensor& x) {
    return permute(x, {1, 2, 0});
  });
}

TEST_CASE("permute: equals transpose for a swap", "[permute]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = rand({2, 3, 4, 5});
  CHECK(permute(x, {0, 3, 2, 1}).values() == transpose(x, 1, 3).values());
}

TEST_CASE("permute: dims that are not a permutation", "[permute][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros({2, 3, 4});
  CHECK_THROWS_WITH(permute(x, {0, 1}),
                    "permute: x [2, 3, 4]: dims [0, 1] has 2 entries for a tensor of rank 3");
  CHECK_THROWS_WITH(permute(x, {0, 1, 1}), "permute: x [2, 3, 4]: dims [0, 1, 1] repeats dim 1");
  CHECK_THROWS_WITH(permute(x, {0, -1, 2}), "permute: x [2, 3, 4]: dims [0, -1, 2] repeats dim 2");
  CHECK_THROWS_WITH(permute(x, {0, 3, 1}),
                    "permute: x [2, 3, 4]: dims [0, 3, 1]: dim 3 is out of range (expected -3..2)");
}

GRADCHECK_TEST_CASE("permute", "ranks 2 to 4") {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases{
      {{2, 3}, {1, 0}}, {{2, 3, 2}, {2, 0, 1}}, {{2, 1, 3, 2}, {3, 1, 0, 2}}};
  for (const auto& [shape, dims] : cases) {
    INFO(shape.str());
    auto report = gradcheck(
        "permute", [dims = dims](std::span<const Tensor> in) { return permute(in[0], dims); },
        {random_input(shape, 1)});
    testing::require_gradcheck(report, "permute");
  }
}
