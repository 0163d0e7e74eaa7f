// Tests for ops/conv1d.cpp: torch 1.13's goldens, its own errors, a float64 gradient check.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/conv_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("conv1d: torch goldens, forward and gradients, float32 and float64", "[conv1d]") {
  using testing::check_conv_golden;
  const auto call = [](int64_t stride, ConvPadding padding, int64_t dilation, int64_t groups) {
    return [=](const Tensor& x, const Tensor& w, const Tensor& b) {
      return conv1d(x, w, b, stride, padding, dilation, groups);
    };
  };
  check_conv_golden("conv1d", "plain", call(1, 0, 1, 1));
  check_conv_golden("conv1d", "stride2_padding1", call(2, 1, 1, 1));
  check_conv_golden("conv1d", "same", call(1, "same", 2, 1));
  check_conv_golden("conv1d", "groups2", call(1, 0, 1, 2));
  check_conv_golden("conv1d", "unbatched", call(1, 0, 1, 1));
}

TEST_CASE("conv1d: errors are conv1d's, in 1-D terms", "[conv1d][errors]") {
  Tape tape;
  TapeScope scope(tape);
  using Catch::Matchers::Contains;
  const Tensor x = zeros({2, 3, 4});
  CHECK_THROWS_WITH(conv1d(x, zeros({2, 3, 5})),
                    "conv1d: input [2, 3, 4] x weight [2, 3, 5]: the kernel 5 (dilated 5) is "
                    "larger than the padded input 4");
  CHECK_THROWS_WITH(conv1d(x, zeros({2, 3, 2}), Tensor(), 2, "same"),
                    Contains("padding \"same\" needs stride 1 (as torch), got stride 2"));
  CHECK_THROWS_WITH(conv1d(x, zeros({2, 3, 2}), Tensor(), 1, {1, 1}),
                    Contains("conv1d: input [2, 3, 4] x weight [2, 3, 2]: padding takes one"));
  CHECK_THROWS_WITH(conv1d(x, zeros({2, 3, 2, 2})), Contains("weight must be 3-D"));
  CHECK_THROWS_WITH(conv1d(zeros({2, 3, 4, 4}), zeros({2, 3, 2})),
                    Contains("input must be 3-D (batched) or 2-D (unbatched), got 4-D"));
}

GRADCHECK_TEST_CASE("conv2d", "conv1d's height-1 view, stride, same, groups") {
  using S = std::span<const Tensor>;
  testing::require_gradcheck(
      gradcheck("conv1d", [](S in) { return conv1d(in[0], in[1], in[2], 2, 1, 2); },
                {random_input({2, 2, 7}, 31), random_input({3, 2, 2}, 32), random_input({3}, 33)}),
      "conv2d");
  testing::require_gradcheck(
      gradcheck("conv1d", [](S in) { return conv1d(in[0], in[1], Tensor(), 1, "same", 1, 2); },
                {random_input({4, 5}, 34), random_input({2, 2, 4}, 35)}),
      "conv2d");
}
