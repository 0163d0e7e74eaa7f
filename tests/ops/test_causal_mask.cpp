// Tests for ops/causal_mask.cpp.
#include <cmath>
#include <limits>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/compare.h"
#include "tests/ops/attention_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;
using testing::attention_golden;
using testing::bits_of;
using testing::golden_tensor;
using testing::max_abs_diff;

namespace {
using tapegrad::testing::kInf;
}

TEST_CASE("causal_mask: small exact case", "[causal_mask]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = causal_mask(tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}, {7.0, 8.0, 9.0}}));
  CHECK(y.values() == std::vector<double>{1, -kInf, -kInf, 4, 5, -kInf, 7, 8, 9});
  CHECK(causal_mask(tensor({{1.0, 2.0}, {3.0, 4.0}}), 0.5).values() ==
        std::vector<double>{1, 0.5, 3, 4});
}

TEST_CASE("causal_mask: the book's masked scores and attention weights", "[causal_mask][golden]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor scaled = golden_tensor("causal.scaled_scores");  // (queries @ keys.T) / sqrt(2), torch
  Tensor masked = causal_mask(scaled);
  CHECK(bits_of(masked.values(), DType::Float32) ==
        bits_of(attention_golden("causal.masked_scaled").values, DType::Float32));
  CHECK(max_abs_diff(softmax(masked, 1).values(), attention_golden("causal.attn_weights").values) <
        1e-7);
}

TEST_CASE("causal_mask: equals masked_fill with triu(ones, 1) on [B, H, T, T] and non-square",
          "[causal_mask]") {
  Tape tape;
  TapeScope scope(tape);
  for (const Shape& shape : {Shape{2, 3, 5, 5}, Shape{2, 3, 5}, Shape{5, 3}, Shape{1, 1}}) {
    INFO(shape.str());
    std::vector<double> xs(static_cast<size_t>(shape.numel()));
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(static_cast<double>(i));
    Tensor x = from_values(shape, xs, DType::Float64);
    Tensor mask = triu(ones({shape.size(-2), shape.size(-1)}, DType::Float64), 1);
    CHECK(causal_mask(x).values() == masked_fill(x, mask, -kInf).values());
  }
  // [2, 3]: torch.triu(torch.ones(2, 3), diagonal=1) = [[0, 1, 1], [0, 0, 1]].
  Tensor wide = causal_mask(tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}));
  CHECK(wide.values() == std::vector<double>{1, -kInf, -kInf, 4, 5, -kInf});
}

TEST_CASE("causal_mask: backward passes dY on and below the diagonal only", "[causal_mask]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(zeros({2, 3, 3}));
  Tensor y = causal_mask(x);
  std::vector<double> dy(18);
  for (size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<double>(i + 1);
  tape.backward(y, dy);
  CHECK(x.grad_values() == std::vector<double>{1, 0, 0, 4, 5, 0, 7, 8, 9,  //
                                               10, 0, 0, 13, 14, 0, 16, 17, 18});
}

TEST_CASE("causal_mask: errors name the op and the tensor", "[causal_mask][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({4});
  x.set_name("scores");
  CHECK_THROWS_WITH(causal_mask(x),
                    "causal_mask: x \"scores\" [4]: expected at least 2 dims [.., Tq, Tk]");
  CHECK_THROWS_WITH(
      causal_mask(zeros({2, 2}), 1e300),
      Catch::Contains("causal_mask: x [2, 2]: value") && Catch::Contains("overflows float32"));
}

GRADCHECK_TEST_CASE("causal_mask", "ranks 2-4, square and not, finite fill") {
  uint64_t seed = 30;
  for (const Shape& shape :
       {Shape{4, 4}, Shape{3, 5}, Shape{5, 3}, Shape{2, 3, 3}, Shape{2, 2, 4, 4}}) {
    INFO(shape.str());
    auto report = gradcheck("causal_mask",
                            [](std::span<const Tensor> in) { return causal_mask(in[0], -2.0); },
                            {random_input(shape, ++seed)});
    testing::require_gradcheck(report, "causal_mask");
  }
}

GRADCHECK_TEST_CASE("causal_mask", "-inf fill under softmax, as in causal attention") {
  uint64_t seed = 40;
  for (const Shape& shape : {Shape{4, 4}, Shape{2, 2, 4, 4}}) {
    INFO(shape.str());
    auto report = gradcheck(
        "causal_mask", [](std::span<const Tensor> in) { return softmax(causal_mask(in[0]), -1); },
        {random_input(shape, ++seed, -2.0, 2.0)});
    testing::require_gradcheck(report, "causal_mask");
  }
}
