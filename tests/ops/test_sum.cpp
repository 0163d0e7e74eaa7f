// Tests for ops/sum.cpp.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("sum: small exact case", "[sum]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = sum(tensor({{1.0, 2.0}, {3.0, 4.5}}));
  CHECK(y.shape() == Shape{});
  CHECK(y.item() == 10.5);
}

GRADCHECK_TEST_CASE("sum", "all elements") {
  for (Shape shape : {Shape{}, Shape{4}, Shape{2, 3}, Shape{2, 1, 3, 2}}) {
    auto report = gradcheck("sum", [](std::span<const Tensor> in) { return sum(in[0]); },
                            {random_input(shape, 3)});
    testing::require_gradcheck(report, "sum");
  }
}
