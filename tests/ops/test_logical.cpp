// Tests for ops/logical.cpp: logical_and, logical_or, logical_xor, logical_not against torch.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise3_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("logical ops: torch goldens (NaN and -0, broadcast)", "[logical][goldens]") {
  using Op = Tensor (*)(const Tensor&, const Tensor&);
  for (const auto& [name, op] :
       std::vector<std::pair<std::string, Op>>{{"logical_and", logical_and},
                                               {"logical_or", logical_or},
                                               {"logical_xor", logical_xor}}) {
    INFO(name);
    const auto f = [op](const std::vector<Tensor>& x) { return op(x[0], x[1]); };
    testing::check_elementwise3(name, {"a", "b"}, f, false);
    testing::check_elementwise3(name + "_broadcast", {"a", "b"}, f, false);
  }
  testing::check_elementwise3(
      "logical_not", {"x"}, [](const std::vector<Tensor>& x) { return logical_not(x[0]); }, false);
}

TEST_CASE("logical ops: no gradient flows through them, and operands must agree",
          "[logical][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = requires_grad(tensor({1.0, 0.0}, DType::Float64));
  const Tensor y =
      sum(x * (logical_and(x, x) + logical_or(x, x) + logical_xor(x, x) + logical_not(x)));
  CHECK(grad(y, {x})[0].values() == std::vector<double>{2.0, 1.0});
  CHECK_THROWS_WITH(logical_or(zeros({2}), zeros({3})),
                    Catch::StartsWith("logical_or: a [2] and b [3]: cannot broadcast"));
}

#define LOGICAL_GRADCHECK(op)                                                             \
  GRADCHECK_TEST_CASE(#op, "no gradient through the mask") {                              \
    auto report = gradcheck(                                                              \
        #op, [](std::span<const Tensor> in) { return in[0] * (op(in[0], in[1]) + 1.0); }, \
        {random_input({2, 3}, 48), random_input({3}, 49)});                               \
    testing::require_gradcheck(report, #op);                                              \
  }
LOGICAL_GRADCHECK(logical_and)
LOGICAL_GRADCHECK(logical_or)
LOGICAL_GRADCHECK(logical_xor)

GRADCHECK_TEST_CASE("logical_not", "no gradient through the mask") {
  auto report = gradcheck(
      "logical_not", [](std::span<const Tensor> in) { return in[0] * (logical_not(in[0]) + 1.0); },
      {random_input({2, 3}, 50)});
  testing::require_gradcheck(report, "logical_not");
}
