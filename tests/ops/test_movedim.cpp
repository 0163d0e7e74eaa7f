// Tests for ops/movedim.cpp: dims moved to new positions, the rest in order.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/indexing_goldens.h"

using namespace tapegrad;

TEST_CASE("movedim: torch goldens (one dim, two dims, negative dims, 0-dim)",
          "[movedim][goldens]") {
  testing::check_unary_indexing("movedim", [](const Tensor& x) { return movedim(x, 0, -1); });
  testing::check_unary_indexing("movedim_list", [](const Tensor& x) {
    const std::vector<int64_t> from{0, 1}, to{2, 3};
    return movedim(x, from, to);
  });
  testing::check_unary_indexing("movedim_back", [](const Tensor& x) { return movedim(x, -1, 0); });
  testing::check_unary_indexing("movedim_0d", [](const Tensor& x) { return movedim(x, 0, 0); });
}

TEST_CASE("movedim: repeated or out-of-range dims", "[movedim][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros({2, 3, 4});
  const std::vector<int64_t> twice{0, 0}, one{1}, pair{1, 2};
  CHECK_THROWS_WITH(
      movedim(x, twice, pair),
      "movedim: x [2, 3, 4]: source [0, 0], destination [1, 2]: source repeats dim 0");
  CHECK_THROWS_WITH(movedim(x, one, pair), Catch::Contains("different lengths"));
  CHECK_THROWS_WITH(movedim(x, 3, 0), Catch::Contains("dim 3 is out of range (expected -3..2)"));
}

GRADCHECK_TEST_CASE("movedim", "one and two dims") {
  auto report =
      gradcheck("movedim", [](std::span<const Tensor> in) { return movedim(in[0], 0, 2); },
                {random_input({2, 3, 2}, 1)});
  testing::require_gradcheck(report, "movedim");
}
