// Tests for ops/mul.cpp.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/elementwise_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("mul: small exact case", "[mul]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = mul(tensor({1.5, 2.0, -3.0}), tensor({2.0, -0.25, 4.0}));
  CHECK(y.values() == std::vector<double>{3.0, -0.5, -12.0});
}

TEST_CASE("mul: [2, 1, 4] * [3, 1] broadcasts to [2, 3, 4]", "[mul]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = tensor({{{1.0, 2.0, 3.0, 4.0}}, {{5.0, 6.0, 7.0, 8.0}}});         // [2, 1, 4]
  Tensor b = from_values(Shape{3, 1}, std::vector<double>{1.0, 10.0, 100.0});  // [3, 1]
  Tensor y = a * b;
  CHECK(y.shape() == Shape{2, 3, 4});
  CHECK(y.values() == std::vector<double>{1, 2, 3, 4, 10, 20, 30, 40, 100, 200, 300, 400,
                                          5, 6, 7, 8, 50, 60, 70, 80, 500, 600, 700, 800});
}

TEST_CASE("mul: the book's x * attn_weights_2[i], [3] * [], forward and backward", "[mul]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({0.5, 1.0, -2.0}));
  Tensor w = requires_grad(scalar(0.25));
  Tensor y = x * w;
  CHECK(y.shape() == Shape{3});
  CHECK(y.values() == std::vector<double>{0.125, 0.25, -0.5});
  tape.backward(y, std::vector<double>{1, 2, 3});
  CHECK(x.grad_values() == std::vector<double>{0.25, 0.5, 0.75});  // dY · w
  CHECK(w.grad_values() == std::vector<double>{-3.5});             // Σ dY · x = 0.5 + 2 - 6
}

TEST_CASE("mul: backward reduces a row operand", "[mul]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = requires_grad(tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, DType::Float64));
  Tensor b = requires_grad(tensor({10.0, 100.0, 1000.0}, DType::Float64));
  tape.backward(sum(a * b));
  CHECK(a.grad_values() == std::vector<double>{10, 100, 1000, 10, 100, 1000});
  CHECK(b.grad_values() == std::vector<double>{5, 7, 9});
}

TEST_CASE("mul: x * x gets both halves of its gradient", "[mul]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({3.0, -1.0}));
  tape.backward(sum(x * x));
  CHECK(x.grad_values() == std::vector<double>{6, -2});
}

TEST_CASE("mul: shapes that do not broadcast name both operands", "[mul][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor w = zeros({4, 3});
  w.set_name("attn_weights");
  CHECK_THROWS_WITH(mul(w, zeros({2, 3})),
                    "mul: a \"attn_weights\" [4, 3] * b [2, 3]: cannot broadcast (dim -2: 4 vs 2)");
}

TEST_CASE("mul: mixed dtypes are an error", "[mul][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(zeros({3}) * scalar(2.0, DType::Float64),
                    "mul: a [3] is float32 but b [] is float64");
}

TEST_CASE("mul: matches torch's float32 forward and backward", "[mul][goldens]") {
  testing::check_elementwise_goldens(
      "mul", [](const Tensor& a, const Tensor& b, double) { return mul(a, b); });
}

GRADCHECK_TEST_CASE("mul", "same shapes and broadcasting both ways") {
  for (const auto& [sa, sb] : testing::binary_gradcheck_shapes()) {
    INFO(sa.str() << " * " << sb.str());
    auto report = gradcheck("mul", [](std::span<const Tensor> in) { return mul(in[0], in[1]); },
                            {random_input(sa, 1), random_input(sb, 2)});
    testing::require_gradcheck(report, "mul");
  }
}
