// Tests for ops/mean.cpp.
#include <cmath>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("mean: small exact case", "[mean]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = mean(tensor({{1.0, 2.0}, {3.0, 4.5}}));
  CHECK(y.shape() == Shape{});
  CHECK(y.item() == 2.625);
  CHECK(mean(scalar(-3.5, DType::Float64)).item() == -3.5);
  CHECK(std::isnan(mean(zeros({0})).item()));  // 0/0, as torch
}

TEST_CASE("mean: backward gives dy / n to every element", "[mean]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = from_values({2, 2}, std::vector<double>{1, 2, 3, 4}, DType::Float64, true);
  Tensor y = mean(x);
  tape.backward(y, std::vector<double>{2.0});
  CHECK(x.grad_values() == std::vector<double>{0.5, 0.5, 0.5, 0.5});
}

GRADCHECK_TEST_CASE("mean", "all elements") {
  for (Shape shape : {Shape{}, Shape{4}, Shape{2, 3}, Shape{2, 3, 2}, Shape{2, 1, 3, 2}}) {
    auto report = gradcheck("mean", [](std::span<const Tensor> in) { return mean(in[0]); },
                            {random_input(shape, 4)});
    testing::require_gradcheck(report, "mean");
  }
}
