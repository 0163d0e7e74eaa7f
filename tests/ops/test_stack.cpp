// Tests for ops/stack.cpp: tensors joined along a new dim.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/indexing_goldens.h"

using namespace tapegrad;

namespace test_stack {

void check(const std::string& name, const std::vector<std::string>& inputs, int dim) {
  testing::check_indexing_goldens(name, inputs, {}, [dim](const testing::IndexingInputs& in) {
    return std::vector<Tensor>{stack(in.t, dim)};
  });
}

}  // namespace test_stack

TEST_CASE("stack: torch goldens (each position, negative dim, 0-dim, zero-size)",
          "[stack][goldens]") {
  test_stack::check("stack_dim0", {"a", "b", "c"}, 0);
  test_stack::check("stack_dim1", {"a", "b", "c"}, 1);
  test_stack::check("stack_dim_neg1", {"a", "b", "c"}, -1);
  test_stack::check("stack_0d", {"a", "b"}, 0);
  test_stack::check("stack_empty", {"a", "b"}, 1);
}

TEST_CASE("stack: shapes, dtypes and dims that do not fit", "[stack][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(stack({zeros({2, 3}), zeros({3, 2})}),
                    "stack: xs[0] [2, 3] and xs[1] [3, 2]: shapes differ");
  CHECK_THROWS_WITH(stack({zeros({2}), zeros({2}, DType::Float64)}),
                    Catch::Contains("dtypes differ (float32 vs float64)"));
  CHECK_THROWS_WITH(stack({zeros({2})}, 2),
                    "stack: xs[0] [2]: dim 2 is out of range (expected -2..1)");
  CHECK_THROWS_WITH(stack(std::vector<Tensor>{}), "stack: expected at least one tensor");
  CHECK_THROWS_WITH(stack({zeros({1, 2, 3, 4, 1, 1, 2, 1})}), Catch::Contains("rank 9"));
}

GRADCHECK_TEST_CASE("stack", "three tensors, each dim") {
  for (int dim : {0, 1, 2, -1}) {
    INFO(dim);
    auto report =
        gradcheck("stack", [dim](std::span<const Tensor> in) { return stack(in, dim); },
                  {random_input({2, 3}, 1), random_input({2, 3}, 2), random_input({2, 3}, 3)});
    testing::require_gradcheck(report, "stack");
  }
}
