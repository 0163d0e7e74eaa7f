// What the convolution ops share: the checked geometry of a call, and the three recorded ops
// (conv2d, conv_transpose2d, conv2d_weight_grad) on a geometry already checked, which their
// recorded backwards call on one another: each is linear in each input, so the derivatives of
// any of them are again these three.
#pragma once

#include <string>

#include <tapegrad/graph/tape.h>
#include <tapegrad/kernels/conv/conv.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad::detail {

// conv2d's and conv1d's arguments in 2-D form (conv1d's on a height-1 view).
struct ConvArgs {
  Size2 stride;
  ConvPadding padding;
  Size2 dilation;
  int64_t groups;
};

// The geometry of op(input, weight, bias) with `spatial` (1 or 2) dims after the channels, the
// input batched or not; throws Error naming `op`, the argument and the shapes when they do not
// fit (ops.h's conv2d lists the checks). For spatial 1 the geometry's rows are one row.
ConvGeometry checked_conv_geometry(const char* op, const Tensor& input, const Tensor& weight,
                                   const Tensor& bias, int spatial, const ConvArgs& args);

// y = conv(x, w) + b (b may be undefined) [batch, out_channels, out_h, out_w], op "conv2d".
Tensor conv2d_recorded(const Tensor& x, const Tensor& w, const Tensor& b, const ConvGeometry& g);
// The transposed convolution of dy with w (+ b per channel) [batch, in_channels, in_h, in_w]:
// conv2d's gradient w.r.t. x, op "conv_transpose2d".
Tensor conv_transpose2d_recorded(const Tensor& dy, const Tensor& w, const Tensor& b,
                                 const ConvGeometry& g);
// conv2d's gradient w.r.t. w for output gradient dy and input x [out_channels, in_channels /
// groups, kernel_h, kernel_w], op "conv2d_weight_grad".
Tensor conv2d_weight_grad_recorded(const Tensor& dy, const Tensor& x, const ConvGeometry& g);

// The geometry a convolution op's node keeps.
inline const ConvGeometry& conv_geometry(const Node& n) {
  return n.state_as<ConvGeometry>();
}

// How drawings show a geometry: "stride 2×2, padding 1×1, dilation 1×1, groups 1".
std::string conv_arguments(const ConvGeometry& g);

}  // namespace tapegrad::detail
