// Tests for ops/conv2d.cpp: torch 1.13's goldens over strides, padding (numbers, "same",
// "valid"), dilation, groups, unbatched input and no bias; the errors; float64 gradient checks.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/conv_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("conv2d: a small exact case", "[conv2d]") {
  Tape tape;
  TapeScope scope(tape);
  // x [1, 1, 3, 3] = 1..9, w [1, 1, 2, 2] = [[1, 0], [0, -1]]: y = x[i, j] − x[i+1, j+1] = −4.
  const Tensor x =
      from_values({1, 1, 3, 3}, std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}, DType::Float64);
  const Tensor w = from_values({1, 1, 2, 2}, std::vector<double>{1, 0, 0, -1}, DType::Float64);
  const Tensor y = conv2d(x, w, from_values({1}, std::vector<double>{0.5}, DType::Float64));
  CHECK(y.shape() == Shape{1, 1, 2, 2});
  CHECK(y.values() == std::vector<double>{-3.5, -3.5, -3.5, -3.5});
  // Padding 1 keeps the corners: y[0, 0] = −x[0, 0] = −1 (plus no bias).
  const Tensor p = conv2d(x, w, Tensor(), 1, 1);
  CHECK(p.shape() == Shape{1, 1, 4, 4});
  CHECK(p.values()[0] == -1.0);
  CHECK(p.values()[15] == 9.0);
}

TEST_CASE("conv2d: torch goldens, forward and gradients, float32 and float64", "[conv2d]") {
  using testing::check_conv_golden;
  const auto plain = [](Size2 stride, ConvPadding padding, Size2 dilation, int64_t groups) {
    return [=](const Tensor& x, const Tensor& w, const Tensor& b) {
      return conv2d(x, w, b, stride, padding, dilation, groups);
    };
  };
  check_conv_golden("conv2d", "plain", plain(1, 0, 1, 1));
  check_conv_golden("conv2d", "stride2", plain(2, 0, 1, 1));
  check_conv_golden("conv2d", "padding1", plain(1, 1, 1, 1));
  check_conv_golden("conv2d", "pair", plain({2, 1}, {1, 2}, {1, 2}, 1));
  check_conv_golden("conv2d", "dilation2", plain(1, 1, 2, 1));
  check_conv_golden("conv2d", "groups2", plain(1, 1, 1, 2));
  check_conv_golden("conv2d", "same", plain(1, "same", 1, 1));
  check_conv_golden("conv2d", "same_dilated", plain(1, "same", 3, 1));
  check_conv_golden("conv2d", "valid", plain(1, "valid", 1, 1));
  check_conv_golden("conv2d", "unbatched", plain(1, 1, 1, 1));
  check_conv_golden("conv2d", "no_bias", plain(2, 1, 1, 1));
  check_conv_golden("conv2d", "pointwise", plain(1, 0, 1, 1));
  check_conv_golden("conv2d", "depthwise", plain(1, 1, 1, 3));
}

TEST_CASE("conv2d: errors name the argument and the shapes", "[conv2d][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros({2, 4, 5, 5});
  const Tensor w = zeros({6, 2, 3, 3});
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(conv2d(x, zeros({6, 3, 3, 3})),
                    "conv2d: input [2, 4, 5, 5] x weight [6, 3, 3, 3]: the input has 4 channels "
                    "but the weight expects 3 x groups 1 = 3");
  CHECK_THROWS_WITH(conv2d(x, w, Tensor(), 1, 0, 1, 3),
                    Contains("groups 3 does not divide the input's 4 channels"));
  CHECK_THROWS_WITH(conv2d(zeros({2, 6, 5, 5}), zeros({4, 2, 3, 3}), Tensor(), 1, 0, 1, 3),
                    Contains("groups 3 does not divide the weight's 4 out_channels"));
  CHECK_THROWS_WITH(conv2d(x, w, Tensor(), 1, 0, 1, 0), Contains("groups must be at least 1"));
  CHECK_THROWS_WITH(conv2d(zeros({1, 4, 2, 2}), w, Tensor(), 1, 0, 1, 2),
                    "conv2d: input [1, 4, 2, 2] x weight [6, 2, 3, 3]: the kernel 3×3 (dilated "
                    "3×3) is larger than the padded input 2×2");
  CHECK_THROWS_WITH(conv2d(x, w, Tensor(), 1, 0, 3, 2),
                    Contains("the kernel 3×3 (dilated 7×7) is larger than the padded input 5×5"));
  CHECK_THROWS_WITH(conv2d(x, w, Tensor(), {1, 0}, 0, 1, 2),
                    Contains("stride must be at least 1, got 1×0"));
  CHECK_THROWS_WITH(conv2d(x, w, Tensor(), 1, 0, -1, 2),
                    Contains("dilation must be at least 1, got -1×-1"));
  CHECK_THROWS_WITH(conv2d(x, w, Tensor(), 1, {0, -1}, 1, 2),
                    Contains("padding must be at least 0, got 0×-1"));
  CHECK_THROWS_WITH(conv2d(x, w, Tensor(), 2, "same", 1, 2),
                    Contains("padding \"same\" needs stride 1 (as torch), got stride 2×2"));
  CHECK_THROWS_WITH(conv2d(x, w, Tensor(), 1, "full", 1, 2),
                    Contains("padding \"full\" is not \"valid\", \"same\" or a number"));
  CHECK_THROWS_WITH(conv2d(zeros({4, 5}), w), Contains("input must be 4-D (batched) or 3-D"));
  CHECK_THROWS_WITH(conv2d(x, zeros({6, 2, 3})), Contains("weight must be 4-D"));
  CHECK_THROWS_WITH(conv2d(x, w, zeros({5}), 1, 0, 1, 2),
                    Contains("bias [5] should have shape [6]"));
  CHECK_THROWS_WITH(conv2d(x, zeros({6, 2, 3, 3}, DType::Float64), Tensor(), 1, 0, 1, 2),
                    Contains("dtypes differ (float32 vs float64)"));
}

GRADCHECK_TEST_CASE("conv2d", "stride, padding, dilation, groups, same, unbatched, no bias") {
  using S = std::span<const Tensor>;
  const auto check = [](const GradcheckFunction& f, const std::vector<GradcheckInput>& in) {
    testing::require_gradcheck(gradcheck("conv2d", f, in), "conv2d");
  };
  check([](S in) { return conv2d(in[0], in[1], in[2], 2, 1); },
        {random_input({2, 2, 5, 4}, 1), random_input({3, 2, 3, 2}, 2), random_input({3}, 3)});
  check(
      [](S in) {
        return conv2d(in[0], in[1], in[2], 1, {1, 0}, 2, 2);
      },
      {random_input({1, 4, 5, 5}, 4), random_input({2, 2, 2, 2}, 5), random_input({2}, 6)});
  check([](S in) { return conv2d(in[0], in[1], Tensor(), 1, "same"); },
        {random_input({1, 2, 4, 3}, 7), random_input({2, 2, 2, 3}, 8)});
  check([](S in) { return conv2d(in[0], in[1], in[2]); },
        {random_input({2, 3, 3}, 9), random_input({2, 2, 1, 1}, 10), random_input({2}, 11)});
}

TEST_CASE("conv2d: create_graph gives a gradient penalty's second derivative", "[conv2d][grad]") {
  // The recorded backward is made of convolutions (conv_transpose2d, conv2d_weight_grad), so a
  // penalty on dX trains w: checked against central differences by gradgradcheck.
  using S = std::span<const Tensor>;
  const GradcheckReport report = gradgradcheck(
      "conv2d",
      [](S in) {
        return conv2d(in[0], in[1], in[2], {1, 2}, 1, 1, 1);
      },
      {random_input({1, 2, 4, 4}, 21), random_input({2, 2, 3, 2}, 22), random_input({2}, 23)});
  testing::require_gradcheck(report, "conv2d");
}
