// Tests for ops/gelu_backward.cpp.
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/backward_ops.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

TEST_CASE("gelu_backward: gelu's kernel backward, bit for bit, and torch's dx", "[gelu_backward]") {
  for (const char* approximate : {"tanh", "none"}) {
    INFO(approximate);
    Tape tape;
    TapeScope scope(tape);
    const GradcheckInput xs = random_input(Shape{3, 37}, 51, -5.0, 5.0);
    const GradcheckInput dys = random_input(Shape{3, 37}, 52);
    Tensor x = from_values(xs.shape, xs.values, DType::Float32, true);
    Tensor dy = from_values(dys.shape, dys.values, DType::Float32);
    tape.backward(gelu(x, approximate), dy.values());
    CHECK(gelu_backward(dy, x, approximate).values() == x.grad_values());
  }
  // torch 1.13's gelu_backward (approximate='tanh') is what its GeluBackward0 computed here.
  const testing::GoldenFile golden("reductions", "gelu.txt");
  Tape tape;
  TapeScope scope(tape);
  Tensor x = from_values(golden["x"].shape, golden["x"].values, DType::Float64);
  Tensor dy = from_values(golden["dy"].shape, golden["dy"].values, DType::Float64);
  testing::require_close(gelu_backward(dy, x, "tanh").values(), golden["dx"], 1e-12, "dx");
}

GRADCHECK_TEST_CASE("gelu_backward", "ranks 0-3") {
  for (Shape shape : {Shape{}, Shape{7}, Shape{3, 4}, Shape{2, 3, 2}}) {
    auto report =
        gradcheck("gelu_backward",
                  [](std::span<const Tensor> in) { return gelu_backward(in[0], in[1], "tanh"); },
                  {random_input(shape, 43), random_input(shape, 44, -4.0, 4.0)});
    testing::require_gradcheck(report, "gelu_backward");
  }
}

GRADCHECK_TEST_CASE("gelu_erf_backward", "ranks 0-3") {
  for (Shape shape : {Shape{}, Shape{7}, Shape{3, 4}, Shape{2, 3, 2}}) {
    auto report = gradcheck("gelu_erf_backward",
                            [](std::span<const Tensor> in) { return gelu_backward(in[0], in[1]); },
                            {random_input(shape, 45), random_input(shape, 46, -4.0, 4.0)});
    testing::require_gradcheck(report, "gelu_erf_backward");
  }
}

TEST_CASE("gelu_backward: bad operands are Errors naming the op and both shapes",
          "[gelu_backward][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor dy = zeros({2, 3}), x = zeros({3, 2});
  CHECK_THROWS_WITH(gelu_backward(dy, x), Catch::Contains("gelu_backward") &&
                                              Catch::Contains("[2, 3]") &&
                                              Catch::Contains("[3, 2]"));
  CHECK_THROWS_WITH(gelu_backward(dy, dy, "erf"),
                    Catch::Contains("gelu_backward") && Catch::Contains("\"erf\""));
  CHECK_THROWS_WITH(gelu_backward(dy, zeros({2, 3}, DType::Float64)),
                    Catch::Contains("gelu_backward"));
}
