// Tests for ops/add.cpp.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/elementwise_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("add: small exact case", "[add]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = add(tensor({1.0, 2.0, 3.0}), tensor({0.5, -2.0, 4.0}));
  CHECK(y.shape() == Shape{3});
  CHECK(y.dtype() == DType::Float32);
  CHECK(y.values() == std::vector<double>{1.5, 0.0, 7.0});
}

TEST_CASE("add: a row broadcasts down [2, 3] + [3]", "[add]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}) + tensor({10.0, 20.0, 30.0});
  CHECK(y.shape() == Shape{2, 3});
  CHECK(y.values() == std::vector<double>{11, 22, 33, 14, 25, 36});
}

TEST_CASE("add: a scalar [] broadcasts to [2, 2], in float64", "[add]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = scalar(0.25, DType::Float64) + tensor({{1.0, 2.0}, {3.0, 4.0}}, DType::Float64);
  CHECK(y.shape() == Shape{2, 2});
  CHECK(y.dtype() == DType::Float64);
  CHECK(y.values() == std::vector<double>{1.25, 2.25, 3.25, 4.25});
}

TEST_CASE("add: backward sums the gradient over broadcast dims", "[add]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = requires_grad(tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}));
  Tensor b = requires_grad(tensor({10.0, 20.0, 30.0}));
  Tensor c = requires_grad(scalar(1.0));
  Tensor y = a + b + c;
  const std::vector<double> dy{1, 2, 3, 4, 5, 6};
  tape.backward(y, dy);
  CHECK(a.grad_values() == dy);
  CHECK(b.grad_values() == std::vector<double>{5, 7, 9});
  CHECK(c.grad_values() == std::vector<double>{21});
}

TEST_CASE("add: a value used twice gets twice the gradient", "[add]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = requires_grad(tensor({1.0, 2.0}));
  tape.backward(sum(a + a));
  CHECK(a.grad_values() == std::vector<double>{2, 2});
}

TEST_CASE("add: shapes that do not broadcast name both operands", "[add][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = zeros({2, 3});
  a.set_name("scores");
  CHECK_THROWS_WITH(add(a, zeros({4})),
                    "add: a \"scores\" [2, 3] + b [4]: cannot broadcast (dim -1: 3 vs 4)");
  CHECK_THROWS_WITH(zeros({2, 3, 4}) + zeros({5, 1}),
                    "add: a [2, 3, 4] + b [5, 1]: cannot broadcast (dim -2: 3 vs 5)");
  CHECK(tape.size() == 4);  // nothing recorded by the failed calls
}

TEST_CASE("add: mixed dtypes are an error", "[add][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(add(zeros({2}), zeros({2}, DType::Float64)),
                    "add: a [2] is float32 but b [2] is float64");
}

TEST_CASE("add: matches torch's float32 forward and backward", "[add][goldens]") {
  testing::check_elementwise_goldens(
      "add", [](const Tensor& a, const Tensor& b, double) { return add(a, b); });
}

GRADCHECK_TEST_CASE("add", "same shapes and broadcasting both ways") {
  for (const auto& [sa, sb] : testing::binary_gradcheck_shapes()) {
    INFO(sa.str() << " + " << sb.str());
    auto report = gradcheck("add", [](std::span<const Tensor> in) { return add(in[0], in[1]); },
                            {random_input(sa, 1), random_input(sb, 2)});
    testing::require_gradcheck(report, "add");
  }
}
