// Tests for ops/linear_weight_backward.cpp.
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/backward_ops.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("linear_weight_backward: linear's kernel weight gradient, bit for bit",
          "[linear_weight_backward]") {
  Tape tape;
  TapeScope scope(tape);
  const GradcheckInput xs = random_input(Shape{2, 5, 7}, 61);
  const GradcheckInput ws = random_input(Shape{3, 7}, 62);
  const GradcheckInput dys = random_input(Shape{2, 5, 3}, 63);
  Tensor x = from_values(xs.shape, xs.values, DType::Float32);
  Tensor w = from_values(ws.shape, ws.values, DType::Float32, true);
  Tensor dy = from_values(dys.shape, dys.values, DType::Float32);
  tape.backward(linear(x, w), dy.values());
  const Tensor dw = linear_weight_backward(dy, x);
  CHECK(dw.shape() == Shape{3, 7});
  CHECK(dw.values() == w.grad_values());
  // Row by row: Σ_r dy[r]ᵀ·x[r], written out.
  const std::vector<double> d = dy.values(), xv = x.values(), z = dw.values();
  for (int64_t o = 0; o < 3; ++o) {
    for (int64_t i = 0; i < 7; ++i) {
      double want = 0;
      for (int64_t r = 0; r < 10; ++r) want += d[r * 3 + o] * xv[r * 7 + i];
      CHECK(z[o * 7 + i] == Approx(want).epsilon(1e-5));
    }
  }
}

GRADCHECK_TEST_CASE("linear_weight_backward", "ranks 1-3") {
  const std::vector<std::pair<Shape, Shape>> shapes{
      {Shape{3}, Shape{4}}, {Shape{5, 3}, Shape{5, 4}}, {Shape{2, 3, 2}, Shape{2, 3, 4}}};
  for (const auto& [ds, xs] : shapes) {
    auto report =
        gradcheck("linear_weight_backward",
                  [](std::span<const Tensor> in) { return linear_weight_backward(in[0], in[1]); },
                  {random_input(ds, 64), random_input(xs, 65)});
    testing::require_gradcheck(report, "linear_weight_backward");
  }
}

TEST_CASE("linear_weight_backward: operands whose rows differ are an Error naming both shapes",
          "[linear_weight_backward][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(linear_weight_backward(zeros({4, 3}), zeros({5, 2})),
                    Catch::Contains("linear_weight_backward") && Catch::Contains("[4, 3]") &&
                        Catch::Contains("[5, 2]"));
  CHECK_THROWS_WITH(linear_weight_backward(zeros({}), zeros({})),
                    Catch::Contains("linear_weight_backward"));
}
