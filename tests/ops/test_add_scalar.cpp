// Tests for ops/add_scalar.cpp (x + c and x - c).
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/elementwise_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("add_scalar: small exact case, forward and backward", "[add_scalar]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({1.0, -2.0, 0.25}));
  Tensor y = add_scalar(x, 0.5);
  CHECK(y.values() == std::vector<double>{1.5, -1.5, 0.75});
  tape.backward(y, std::vector<double>{1, 2, 3});
  CHECK(x.grad_values() == std::vector<double>{1, 2, 3});
}

TEST_CASE("add_scalar: the operators x + c and x - c", "[add_scalar]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({{1.0, 2.0}, {3.0, 4.0}}, DType::Float64);
  CHECK((x + 1.5).values() == std::vector<double>{2.5, 3.5, 4.5, 5.5});
  CHECK((x - 1.5).values() == std::vector<double>{-0.5, 0.5, 1.5, 2.5});
}

TEST_CASE("add_scalar: the constant is rounded to float32 first, as in torch", "[add_scalar]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = tensor({1.0}) + 0.1;
  CHECK(y.values() == std::vector<double>{1.0f + 0.1f});
}

TEST_CASE("add_scalar: matches torch's float32 forward and backward", "[add_scalar][goldens]") {
  testing::check_elementwise_goldens(
      "add_scalar", [](const Tensor& a, const Tensor&, double c) { return add_scalar(a, c); });
}

GRADCHECK_TEST_CASE("add_scalar", "ranks 0 to 4") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report = gradcheck("add_scalar", [](std::span<const Tensor> in) { return in[0] - 0.75; },
                            {random_input(shape, 1)});
    testing::require_gradcheck(report, "add_scalar");
  }
}
