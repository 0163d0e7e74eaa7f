// float32 convolutions on oneDNN's direct kernels, for conv.h's kernels to hand a geometry to when
// oneDNN is linked (kernels/conv/conv_dnnl.cpp says why); same contracts as conv.h's functions.
#pragma once

#include <tapegrad/kernels/conv/conv.h>

namespace tapegrad::detail {

// Whether the functions below take this geometry: oneDNN is linked and can express it.
bool dnnl_conv_usable(const ConvGeometry& g);

// y = conv(x, w) + b (b may be null), or y += conv(x, w) with `accumulate`.
void dnnl_conv_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                       float* y, bool accumulate);
// dx = (or += with `accumulate`) the input gradient of y = conv(x, w) for dy.
void dnnl_conv_backward_data(const ConvGeometry& g, const float* dy, const float* w, float* dx,
                             bool accumulate);
// dw = (or += with `accumulate`) the weight gradient of y = conv(x, w) for dy.
void dnnl_conv_backward_weights(const ConvGeometry& g, const float* dy, const float* x, float* dw,
                                bool accumulate);

}  // namespace tapegrad::detail
