// Tests for ops/mse_loss.cpp.
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("mse_loss: small exact case and gradients to both inputs", "[mse_loss]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor p = from_values({3}, std::vector<double>{1, 2, 3}, DType::Float64, true);
  Tensor t = from_values({3}, std::vector<double>{1, 0, 5}, DType::Float64, true);
  Tensor y = mse_loss(p, t);
  CHECK(y.shape() == Shape{});
  CHECK(y.item() == 8.0 / 3.0);
  tape.backward(y, std::vector<double>{1.5});
  // dP = 2(P − T)/n · dy = (P − T)
  CHECK(p.grad_values() == std::vector<double>{0, 2, -2});
  CHECK(t.grad_values() == std::vector<double>{0, -2, 2});
}

TEST_CASE("mse_loss: a target that needs no gradient gets none", "[mse_loss]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor p = from_values({2, 2}, std::vector<double>{1, 2, 3, 4}, DType::Float32, true);
  Tensor t = tensor({{0.0, 0.0}, {0.0, 0.0}});
  Tensor y = mse_loss(p, t);
  CHECK(y.item() == 7.5);
  y.backward();
  CHECK(p.grad_values() == std::vector<double>{0.5, 1, 1.5, 2});
  CHECK(t.grad_values().empty());
}

TEST_CASE("mse_loss: shapes must be equal or broadcast", "[mse_loss][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor p = zeros({2, 3});
  p.set_name("logits");
  Tensor t = zeros({2});
  CHECK_THROWS_WITH(mse_loss(p, t),
                    "mse_loss: prediction \"logits\" [2, 3] and target [2]: "
                    "shapes must be equal or broadcast");
  CHECK_THROWS_WITH(mse_loss(p, zeros({2, 3}, DType::Float64)), Catch::Contains("mse_loss") &&
                                                                    Catch::Contains("float32") &&
                                                                    Catch::Contains("float64"));
}

GRADCHECK_TEST_CASE("mse_loss", "both inputs, ranks 0-4") {
  for (Shape shape : {Shape{}, Shape{5}, Shape{2, 3}, Shape{2, 3, 2}, Shape{2, 1, 3, 2}}) {
    auto report =
        gradcheck("mse_loss", [](std::span<const Tensor> in) { return mse_loss(in[0], in[1]); },
                  {random_input(shape, 21), random_input(shape, 22)});
    testing::require_gradcheck(report, "mse_loss");
  }
}
