// conv1d: torch.nn.functional.conv1d as conv2d on a height-1 view, its checks named conv1d.
#include <tapegrad/ops/detail/conv.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t stride,
              ConvPadding padding, int64_t dilation, int64_t groups) {
  if (padding.pair) {
    throw Error("conv1d: " + describe("input", input) + " x " + describe("weight", weight) +
                ": padding takes one number, got " + std::to_string(padding.size.h) + "×" +
                std::to_string(padding.size.w));
  }
  ConvPadding columns = padding;
  columns.size.h = 0;
  const ConvGeometry g = detail::checked_conv_geometry(
      "conv1d", input, weight, bias, 1, {Size2(1, stride), columns, Size2(1, dilation), groups});
  const Tensor x = reshape(input, {g.batch, g.in_channels, 1, g.in_w});
  const Tensor w = reshape(weight, {g.out_channels, g.group_in(), 1, g.kernel_w});
  const Tensor y = detail::conv2d_recorded(x, w, bias, g);
  if (input.rank() == 3) return reshape(y, {g.batch, g.out_channels, g.out_w});
  return reshape(y, {g.out_channels, g.out_w});
}

}  // namespace tapegrad
