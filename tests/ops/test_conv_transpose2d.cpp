// Tests for ops/conv_transpose2d.cpp: torch 1.13's goldens (stride, output_padding, groups,
// dilation, unbatched, no bias), the errors, float64 gradient checks, and that it is conv2d's
// input gradient.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/conv_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("conv_transpose2d: torch goldens, forward and gradients, float32 and float64",
          "[conv_transpose2d]") {
  using testing::check_conv_golden;
  const auto call = [](Size2 stride, Size2 padding, Size2 output_padding, int64_t groups,
                       Size2 dilation) {
    return [=](const Tensor& x, const Tensor& w, const Tensor& b) {
      return conv_transpose2d(x, w, b, stride, padding, output_padding, groups, dilation);
    };
  };
  check_conv_golden("conv_transpose2d", "plain", call(1, 0, 0, 1, 1));
  check_conv_golden("conv_transpose2d", "stride2", call(2, 1, 1, 1, 1));
  check_conv_golden("conv_transpose2d", "groups2", call({2, 1}, 0, 0, 2, 1));
  check_conv_golden("conv_transpose2d", "dilation2", call(2, {1, 0}, {1, 0}, 1, 2));
  check_conv_golden("conv_transpose2d", "unbatched", call(2, 0, 0, 1, 1));
}

TEST_CASE("conv_transpose2d: it is conv2d's gradient w.r.t. its input", "[conv_transpose2d]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = requires_grad(rand({2, 4, 7, 7}, DType::Float64));
  const Tensor w = rand({6, 2, 3, 2}, DType::Float64);
  const Tensor y = conv2d(x, w, Tensor(), 2, 1, 1, 2);
  const Tensor dy = rand(y.shape(), DType::Float64);
  const Tensor dx =
      grad(std::vector<Tensor>{y}, std::vector<Tensor>{x}, std::vector<Tensor>{dy})[0];
  // y is [2, 6, 4, 4]; back to 7 = (4 − 1)·2 − 2·1 + 1·(3 − 1) + 1 rows and
  // 7 = (4 − 1)·2 − 2·1 + 1·(2 − 1) + 1 + 1 columns: output_padding {0, 1}.
  const Tensor z = conv_transpose2d(dy, w, Tensor(), 2, 1, {0, 1}, 2);
  REQUIRE(z.shape() == x.shape());
  CHECK(z.values() == dx.values());
}

TEST_CASE("conv_transpose2d: errors name the argument and the shapes",
          "[conv_transpose2d][errors]") {
  Tape tape;
  TapeScope scope(tape);
  using Catch::Matchers::Contains;
  const Tensor x = zeros({1, 4, 3, 3});
  const Tensor w = zeros({4, 2, 3, 3});
  CHECK_THROWS_WITH(conv_transpose2d(x, zeros({3, 2, 3, 3})),
                    "conv_transpose2d: input [1, 4, 3, 3] x weight [3, 2, 3, 3]: the input has 4 "
                    "channels but the weight's dim 0 (in_channels) is 3");
  CHECK_THROWS_WITH(conv_transpose2d(x, w, Tensor(), 1, 0, 0, 3),
                    Contains("groups 3 does not divide the input's 4 channels"));
  CHECK_THROWS_WITH(conv_transpose2d(x, w, Tensor(), 2, 0, 2),
                    Contains("output_padding 2×2 must be smaller than the stride 2×2 or the "
                             "dilation 1×1"));
  CHECK_THROWS_WITH(conv_transpose2d(x, w, Tensor(), 1, 3),
                    Contains("the output would be -1×-1 (padding 3×3 too large)"));
  CHECK_THROWS_WITH(conv_transpose2d(x, w, Tensor(), 0), Contains("stride must be at least 1"));
  CHECK_THROWS_WITH(conv_transpose2d(x, w, zeros({4})), Contains("bias [4] should be float32 [2]"));
  CHECK_THROWS_WITH(conv_transpose2d(zeros({4, 3}), w), Contains("input must be 4-D"));
}

GRADCHECK_TEST_CASE("conv_transpose2d", "stride, output_padding, groups, dilation, bias") {
  using S = std::span<const Tensor>;
  testing::require_gradcheck(
      gradcheck(
          "conv_transpose2d",
          [](S in) { return conv_transpose2d(in[0], in[1], in[2], 2, 1, 1, 2, 1); },
          {random_input({1, 4, 3, 2}, 41), random_input({4, 1, 3, 2}, 42), random_input({2}, 43)}),
      "conv_transpose2d");
  testing::require_gradcheck(
      gradcheck("conv_transpose2d",
                [](S in) { return conv_transpose2d(in[0], in[1], Tensor(), 1, 0, 0, 1, 2); },
                {random_input({2, 3, 3}, 44), random_input({2, 2, 2, 2}, 45)}),
      "conv_transpose2d");
}
