// Tests for ops/repeat.cpp: x tiled along each dim.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/indexing_goldens.h"

using namespace tapegrad;

TEST_CASE("repeat: torch goldens (a new leading dim, 0-dim, zero-size, zero repeats)",
          "[repeat][goldens]") {
  testing::check_unary_indexing("repeat", [](const Tensor& x) { return repeat(x, {2, 1}); });
  testing::check_unary_indexing("repeat_new_dim", [](const Tensor& x) {
    return repeat(x, {2, 2, 3});
  });
  testing::check_unary_indexing("repeat_0d", [](const Tensor& x) { return repeat(x, {3}); });
  testing::check_unary_indexing("repeat_empty", [](const Tensor& x) { return repeat(x, {2, 2}); });
  testing::check_unary_indexing("repeat_zero", [](const Tensor& x) { return repeat(x, {1, 0}); });
}

TEST_CASE("repeat: too few, negative or too many repeats", "[repeat][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros({2, 3});
  CHECK_THROWS_WITH(repeat(x, {2}),
                    "repeat: x [2, 3]: repeats [2] has fewer entries than x has dims");
  CHECK_THROWS_WITH(repeat(x, {2, -1}), "repeat: x [2, 3]: repeats [2, -1] has a negative entry");
  CHECK_THROWS_WITH(repeat(x, {1, 1, 1, 1, 1, 1, 1, 1, 1}), Catch::Contains("rank 9"));
}

GRADCHECK_TEST_CASE("repeat", "tiles and a new dim") {
  auto report = gradcheck("repeat",
                          [](std::span<const Tensor> in) {
                            return repeat(in[0], {2, 1, 3});
                          },
                          {random_input({2, 2}, 1)});
  testing::require_gradcheck(report, "repeat");
}
