// Tests for ops/linear.cpp: nn.Linear's y = x·Wᵀ + b over inputs of rank 1 to 4.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/layout_goldens.h"

using namespace tapegrad;

TEST_CASE("linear: small exact case, with and without bias", "[linear]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  Tensor w = tensor({{1.0, 0.0, -1.0}, {2.0, 1.0, 0.0}});
  Tensor y = linear(x, w, tensor({0.5, -1.0}));
  CHECK(y.shape() == Shape{2, 2});
  CHECK(y.values() == std::vector<double>{-1.5, 3.0, -1.5, 12.0});
  Tensor y0 = linear(x, w);
  CHECK(y0.values() == std::vector<double>{-2.0, 4.0, -2.0, 13.0});
  Tensor v = linear(tensor({1.0, 2.0, 3.0}), w, tensor({0.5, -1.0}));
  CHECK(v.shape() == Shape{2});
  CHECK(v.values() == std::vector<double>{-1.5, 3.0});
}

TEST_CASE("linear: a Parameter as the weight, gradients reach it", "[linear]") {
  Tape tape;
  TapeScope scope(tape);
  Parameter w = Parameter::from_values({1, 2}, std::vector<double>{2.0, -1.0}, DType::Float64);
  Tensor x = from_values({3, 2}, std::vector<double>{1, 2, 3, 4, 5, 6}, DType::Float64);
  Tensor y = sum(linear(x, w));
  CHECK(y.item() == (2 - 2) + (6 - 4) + (10 - 6));
  y.backward();
  // dW = Σ_rows x = [9, 12]
  CHECK(w.grad_values() == std::vector<double>{9.0, 12.0});
}

TEST_CASE("linear: torch goldens, forward and backward, float64 and float32", "[linear]") {
  // F.linear over x of ranks 1-4, with and without bias (make_layout_goldens.py).
  const auto cases = testing::layout_golden_cases("linear");
  CHECK(cases.size() == 8);
  for (const auto& c : cases) {
    for (DType dtype : {DType::Float64, DType::Float32}) {
      if (c.find("b") != nullptr) {
        testing::check_golden_case(
            c, {"x", "w", "b"},
            [](std::span<const Tensor> in) { return linear(in[0], in[1], in[2]); }, dtype);
      } else {
        testing::check_golden_case(
            c, {"x", "w"}, [](std::span<const Tensor> in) { return linear(in[0], in[1]); }, dtype);
      }
    }
  }
}

TEST_CASE("linear: shape and dtype errors", "[linear][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor w = zeros({4, 3});
  w.set_name("W_query");
  CHECK_THROWS_WITH(linear(zeros({2, 5}), w),
                    "linear: x [2, 5] x weight \"W_query\" [4, 3]: in features 5 != 3");
  CHECK_THROWS_WITH(linear(zeros({2, 3}), w, zeros({3})),
                    "linear: x [2, 3] x weight \"W_query\" [4, 3]: bias [3] should have shape [4]");
  CHECK_THROWS_WITH(linear(zeros({2, 3}), zeros({3})),
                    "linear: x [2, 3] x weight [3]: weight must be 2-D [out, in]");
  CHECK_THROWS_WITH(linear(scalar(1.0), w),
                    "linear: x [] x weight \"W_query\" [4, 3]: x must have at least 1 dim");
  CHECK_THROWS_WITH(linear(zeros({2, 3}, DType::Float64), w),
                    "linear: x [2, 3] x weight \"W_query\" [4, 3]: dtypes differ (float64 vs "
                    "float32)");
  CHECK_THROWS_WITH(linear(zeros({2, 3}), w, zeros({4}, DType::Float64)),
                    "linear: x [2, 3] x weight \"W_query\" [4, 3]: bias [4] is float64, not "
                    "float32");
}

GRADCHECK_TEST_CASE("linear", "ranks 1 to 4, with and without bias") {
  for (Shape sx : {Shape{3}, Shape{2, 3}, Shape{2, 4, 3}, Shape{2, 2, 3, 3}}) {
    INFO(sx.str());
    auto with_bias =
        gradcheck("linear", [](std::span<const Tensor> in) { return linear(in[0], in[1], in[2]); },
                  {random_input(sx, 1), random_input({4, 3}, 2), random_input({4}, 3)});
    testing::require_gradcheck(with_bias, "linear");
    auto without =
        gradcheck("linear", [](std::span<const Tensor> in) { return linear(in[0], in[1]); },
                  {random_input(sx, 4), random_input({5, 3}, 5)});
    testing::require_gradcheck(without, "linear");
  }
}
