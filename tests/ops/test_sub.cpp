// Tests for ops/sub.cpp.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/elementwise_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("sub: small exact case", "[sub]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = sub(tensor({1.0, 2.0, 3.0}), tensor({0.5, -2.0, 4.0}));
  CHECK(y.values() == std::vector<double>{0.5, 4.0, -1.0});
}

TEST_CASE("sub: broadcasts [2, 3] - [3] and [] - [2, 2]", "[sub]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}) - tensor({1.0, 1.0, 2.0});
  CHECK(y.shape() == Shape{2, 3});
  CHECK(y.values() == std::vector<double>{0, 1, 1, 3, 4, 4});
  Tensor z = scalar(1.0) - tensor({{1.0, 2.0}, {3.0, 4.0}});
  CHECK(z.shape() == Shape{2, 2});
  CHECK(z.values() == std::vector<double>{0, -1, -2, -3});
}

TEST_CASE("sub: backward negates and reduces the right operand's gradient", "[sub]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = requires_grad(tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}));
  Tensor b =
      requires_grad(from_values(Shape{2, 1}, std::vector<double>{1.0, 2.0}));  // [2, 1]: a column
  const std::vector<double> dy{1, 2, 3, 4, 5, 6};
  tape.backward(a - b, dy);
  CHECK(a.grad_values() == dy);
  CHECK(b.grad_values() == std::vector<double>{-6, -15});
}

TEST_CASE("sub: errors name the op and both operands", "[sub][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(sub(zeros({3}), zeros({2})),
                    "sub: a [3] - b [2]: cannot broadcast (dim -1: 3 vs 2)");
  CHECK_THROWS_WITH(sub(zeros({2}, DType::Float64), zeros({2})),
                    "sub: a [2] is float64 but b [2] is float32");
}

TEST_CASE("sub: matches torch's float32 forward and backward", "[sub][goldens]") {
  testing::check_elementwise_goldens(
      "sub", [](const Tensor& a, const Tensor& b, double) { return sub(a, b); });
}

GRADCHECK_TEST_CASE("sub", "same shapes and broadcasting both ways") {
  for (const auto& [sa, sb] : testing::binary_gradcheck_shapes()) {
    INFO(sa.str() << " - " << sb.str());
    auto report = gradcheck("sub", [](std::span<const Tensor> in) { return sub(in[0], in[1]); },
                            {random_input(sa, 1), random_input(sb, 2)});
    testing::require_gradcheck(report, "sub");
  }
}
