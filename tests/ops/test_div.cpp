// Tests for ops/div.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/elementwise_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("div: small exact case", "[div]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = div(tensor({1.0, -3.0, 2.0}), tensor({4.0, 2.0, -0.5}));
  CHECK(y.values() == std::vector<double>{0.25, -1.5, -4.0});
}

TEST_CASE("div: the book's attn_scores_2 / attn_scores_2.sum(), [6] / []", "[div]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor scores = requires_grad(tensor({0.5, 1.5, 2.0, 1.0, 2.5, 0.5}));  // sums to 8
  Tensor weights = scores / sum(scores);
  CHECK(weights.shape() == Shape{6});
  CHECK(weights.values() == std::vector<double>{0.0625, 0.1875, 0.25, 0.125, 0.3125, 0.0625});
  // d weights[0] / d scores[j] = δ0j / s - scores[0] / s² = δ0j / 8 - 0.5 / 64.
  tape.backward(weights, std::vector<double>{1, 0, 0, 0, 0, 0});
  CHECK(scores.grad_values() ==
        std::vector<double>{0.1171875, -0.0078125, -0.0078125, -0.0078125, -0.0078125, -0.0078125});
}

TEST_CASE("div: a column broadcasts across, with both gradients", "[div]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = requires_grad(tensor({{1.0, 2.0}, {3.0, 4.0}}, DType::Float64));
  Tensor b = requires_grad(
      from_values(Shape{2, 1}, std::vector<double>{2.0, 4.0}, DType::Float64));  // [2, 1]
  Tensor y = a / b;
  CHECK(y.values() == std::vector<double>{0.5, 1.0, 0.75, 1.0});
  tape.backward(sum(y));
  CHECK(a.grad_values() == std::vector<double>{0.5, 0.5, 0.25, 0.25});
  // dB = -Σ_j a_ij / b_i² = -(1 + 2) / 4, -(3 + 4) / 16
  CHECK(b.grad_values() == std::vector<double>{-0.75, -0.4375});
}

TEST_CASE("div: division by zero gives inf and nan like torch, no throw", "[div]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = tensor({1.0, -1.0, 0.0}) / scalar(0.0);
  const std::vector<double> v = y.values();
  CHECK(v[0] == INFINITY);
  CHECK(v[1] == -INFINITY);
  CHECK(std::isnan(v[2]));
}

TEST_CASE("div: errors name the op and both operands", "[div][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(div(zeros({6}), zeros({5})),
                    "div: a [6] / b [5]: cannot broadcast (dim -1: 6 vs 5)");
  CHECK_THROWS_WITH(div(zeros({6}), scalar(1.0, DType::Float64)),
                    "div: a [6] is float32 but b [] is float64");
}

TEST_CASE("div: matches torch's float32 forward and backward", "[div][goldens]") {
  testing::check_elementwise_goldens(
      "div", [](const Tensor& a, const Tensor& b, double) { return div(a, b); });
}

GRADCHECK_TEST_CASE("div", "same shapes and broadcasting both ways") {
  for (const auto& [sa, sb] : testing::binary_gradcheck_shapes()) {
    INFO(sa.str() << " / " << sb.str());
    // Divisors kept away from zero, of both signs.
    GradcheckInput divisor = random_input(sb, 2, 0.5, 2.0);
    for (size_t i = 0; i < divisor.values.size(); i += 2) divisor.values[i] = -divisor.values[i];
    auto report = gradcheck("div", [](std::span<const Tensor> in) { return div(in[0], in[1]); },
                            {random_input(sa, 1), divisor});
    testing::require_gradcheck(report, "div");
  }
}
