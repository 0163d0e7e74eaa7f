// Tests for ops/flip.cpp: dims reversed.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/indexing_goldens.h"

using namespace tapegrad;

TEST_CASE("flip: torch goldens (two dims, a negative dim, none, 0-dim, zero-size)",
          "[flip][goldens]") {
  testing::check_unary_indexing("flip", [](const Tensor& x) { return flip(x, {0, 2}); });
  testing::check_unary_indexing("flip_neg", [](const Tensor& x) { return flip(x, {-1}); });
  testing::check_unary_indexing("flip_none", [](const Tensor& x) { return flip(x, {}); });
  testing::check_unary_indexing("flip_0d", [](const Tensor& x) { return flip(x, {0}); });
  testing::check_unary_indexing("flip_empty", [](const Tensor& x) { return flip(x, {0, 1}); });
}

TEST_CASE("flip: repeated or out-of-range dims", "[flip][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(flip(zeros({2, 3}), {1, -1}), "flip: x [2, 3]: dims [1, -1] repeats dim 1");
  CHECK_THROWS_WITH(flip(zeros({2, 3}), {int64_t{1} << 32}),
                    Catch::Contains("flip: x [2, 3]: dim 2147483647 is out of range"));
  CHECK_THROWS_WITH(flip(zeros({2, 3}), {2}),
                    "flip: x [2, 3]: dim 2 is out of range (expected -2..1)");
}

GRADCHECK_TEST_CASE("flip", "ranks 1 to 4") {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases{
      {{4}, {0}}, {{2, 3}, {1}}, {{2, 3, 2}, {0, 2}}, {{2, 1, 3, 2}, {0, 1, 2, 3}}};
  for (const auto& [shape, dims] : cases) {
    INFO(shape.str());
    auto report =
        gradcheck("flip", [dims = dims](std::span<const Tensor> in) { return flip(in[0], dims); },
                  {random_input(shape, 1)});
    testing::require_gradcheck(report, "flip");
  }
}
