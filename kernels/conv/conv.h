// 2-D convolution on buffers (forward, input and weight gradients) as im2col + GEMM, the kernels
// ops/conv2d.cpp, ops/conv_transpose2d.cpp and ops/conv2d_weight_grad.cpp call.
//
// float32 runs on oneDNN's direct kernels where tapegrad links oneDNN (conv_dnnl.h says why),
// float64 and the geometries oneDNN cannot express on im2col.
//
// Why im2col: each image's receptive fields are copied into a matrix of columns, so that one
// product per image and group, W [C_out/g, C_in/g·kH·kW] · cols [C_in/g·kH·kW, H_out·W_out],
// runs on the tuned GEMM kernels (kernels/gemm/gemm.h) instead of a direct loop nest of our own.
// The input gradient is the same product transposed followed by col2im (which sums the columns
// back onto the pixels they came from): a transposed convolution. The columns live in a
// per-thread scratch buffer that only grows.
#pragma once

#include <cstdint>

namespace tapegrad {

// One convolution y = conv(x, w) seen from its forward: x [batch, in_channels, in_h, in_w],
// w [out_channels, in_channels / groups, kernel_h, kernel_w], y [batch, out_channels, out_h,
// out_w]. Output row r reads input rows r·stride_h − pad_h + i·dilation_h (i < kernel_h), zero
// outside [0, in_h): the padding after the last row is implied by out_h, so torch's asymmetric
// "same" padding and conv_transpose2d's output_padding need nothing more. Columns likewise.
struct ConvGeometry {
  int64_t batch = 0;
  int64_t in_channels = 0, in_h = 0, in_w = 0;
  int64_t out_channels = 0, out_h = 0, out_w = 0;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;

  int64_t group_in() const { return in_channels / groups; }
  int64_t group_out() const { return out_channels / groups; }
  int64_t col_rows() const { return group_in() * kernel_h * kernel_w; }  // K of the products
  int64_t out_pixels() const { return out_h * out_w; }
  int64_t in_pixels() const { return in_h * in_w; }
  int64_t weight_numel() const { return out_channels * col_rows(); }
};

// y = conv(x, w) + b (b: [out_channels] or null). With `accumulate`, y += conv(x, w) instead
// (b must then be null): for a gradient that already holds terms.
template <class T>
void conv2d_forward(const ConvGeometry& g, const T* x, const T* w, const T* b, T* y,
                    bool accumulate = false);

// dx += the transposed convolution of dy with w (x's gradient of y = conv(x, w); also
// conv_transpose2d's forward). dx [batch, in_channels, in_h, in_w] must hold its terms so far
// (zeros at first); with `accumulate` false, dx = that instead (its contents are not read).
template <class T>
void conv2d_backward_input(const ConvGeometry& g, const T* dy, const T* w, T* dx,
                           bool accumulate = true);

// dw = Σ_images dy·im2col(x)ᵀ per group (w's gradient of y = conv(x, w)), or dw += that with
// `accumulate`; images summed in order.
template <class T>
void conv2d_backward_weight(const ConvGeometry& g, const T* dy, const T* x, T* dw, bool accumulate);

// db[c] += Σ over images and pixels of y[n, c] (y [batch, channels, pixels]): a bias's gradient.
template <class T>
void channel_sums(const T* y, int64_t batch, int64_t channels, int64_t pixels, T* db);

// y[n, c] += b[c] over every pixel (y [batch, channels, pixels]).
template <class T>
void add_channel_bias(T* y, const T* b, int64_t batch, int64_t channels, int64_t pixels);

}  // namespace tapegrad
