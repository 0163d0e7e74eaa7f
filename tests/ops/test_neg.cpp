// Tests for ops/neg.cpp.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/elementwise_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("neg: small exact case, forward and backward", "[neg]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({1.0, -2.0, 0.5}));
  Tensor y = -x;
  CHECK(y.values() == std::vector<double>{-1.0, 2.0, -0.5});
  tape.backward(y, std::vector<double>{1, 2, 3});
  CHECK(x.grad_values() == std::vector<double>{-1, -2, -3});
}

TEST_CASE("neg: matches torch's float32 forward and backward", "[neg][goldens]") {
  testing::check_elementwise_goldens("neg",
                                     [](const Tensor& a, const Tensor&, double) { return neg(a); });
}

GRADCHECK_TEST_CASE("neg", "ranks 0 to 4") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report = gradcheck("neg", [](std::span<const Tensor> in) { return neg(in[0]); },
                            {random_input(shape, 1)});
    testing::require_gradcheck(report, "neg");
  }
}
