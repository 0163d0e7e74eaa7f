// Tests for ops/add.cpp.
#include "graph/factory.h"
#include "ops/ops.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("add: small exact case", "[add]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = add(tensor({1.0, 2.0, 3.0}), tensor({0.5, -2.0, 4.0}));
  CHECK(y.values() == std::vector<double>{1.5, 0.0, 7.0});
}

GRADCHECK_TEST_CASE("add", "same shapes") {
  for (Shape shape : {Shape{5}, Shape{2, 3}, Shape{2, 3, 4}}) {
    auto report = gradcheck(
        "add", [](std::span<const Tensor> in) { return add(in[0], in[1]); },
        {random_input(shape, 1), random_input(shape, 2)});
    testing::require_gradcheck(report, "add");
  }
}
