// Tests for ops/roll.cpp: cyclic shifts along dims or of the flattened tensor.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/indexing_goldens.h"

using namespace tapegrad;

TEST_CASE("roll: torch goldens (flattened, two dims, shifts beyond the size, 0-dim, zero-size)",
          "[roll][goldens]") {
  testing::check_unary_indexing("roll_flat", [](const Tensor& x) { return roll(x, 1); });
  testing::check_unary_indexing("roll_dims", [](const Tensor& x) {
    return roll(x, {1, -1}, {0, 1});
  });
  testing::check_unary_indexing("roll_large", [](const Tensor& x) { return roll(x, 5, 1); });
  testing::check_unary_indexing("roll_neg", [](const Tensor& x) { return roll(x, -2, -1); });
  testing::check_unary_indexing("roll_0d", [](const Tensor& x) { return roll(x, 3); });
  testing::check_unary_indexing("roll_empty", [](const Tensor& x) { return roll(x, 1, 1); });
}

TEST_CASE("roll: shifts and dims that do not pair up", "[roll][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros({2, 3});
  CHECK_THROWS_WITH(roll(x, {1, 2}, {0}),
                    "roll: x [2, 3]: shifts [1, 2] and dims [0] differ in length");
  const std::vector<int64_t> two{1, 2};
  CHECK_THROWS_WITH(roll(x, two), Catch::Contains("must hold one shift when no dims are given"));
  CHECK_THROWS_WITH(roll(x, 1, 2), "roll: x [2, 3]: dim 2 is out of range (expected -2..1)");
  CHECK_THROWS_WITH(roll(scalar(1.0), 1, 0), Catch::Contains("cannot roll a 0-dim tensor"));
}

GRADCHECK_TEST_CASE("roll", "flattened and along dims") {
  auto report = gradcheck("roll", [](std::span<const Tensor> in) { return roll(in[0], -4); },
                          {random_input({2, 3}, 1)});
  testing::require_gradcheck(report, "roll");
  report = gradcheck("roll",
                     [](std::span<const Tensor> in) {
                       return roll(in[0], {2, 1, -1}, {0, 2, 0});
                     },
                     {random_input({3, 2, 4}, 2)});
  testing::require_gradcheck(report, "roll");
}
