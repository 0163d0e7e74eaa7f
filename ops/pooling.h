// torch.nn.functional's pooling and interpolation (issue #36), with torch's names, argument order
// and defaults, on batched [N, C, H, W] or unbatched [C, H, W] inputs ([N, C, L] or [C, L] for the
// 1-D ops):
//
//   Tensor y = max_pool2d(x, 2);                          // kernel 2, stride 2
//   Tensor z = avg_pool2d(x, {3, 2}, {{2, 1}}, 1);        // kernel [3, 2], stride [2, 1], padding
//   1 Tensor u = interpolate(x, {.scale_factor = 2.0, .mode = InterpolateMode::Bilinear});
//
// Each checks its arguments as torch does and throws Error naming the op, the argument and the
// shapes: a rank other than those above, a kernel, stride or dilation below 1, padding above half
// the kernel, a window that does not fit the padded input (an output size below 1). Results and
// gradients are torch 1.13's CPU kernels' (the loops in kernels/pool/, ops/DERIVATIVES.md).
#pragma once

#include <cstdint>
#include <optional>

#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/ops/size2.h>

namespace tapegrad {

// --- max pooling: the window's maximum; its gradient goes to that element --------------------
// stride: none means kernel_size. Padding counts as -inf. On ties the first maximum in scan order
// (row by row) is picked; a NaN is the maximum (the last NaN of the window, as torch's CPU kernel).
// ceil_mode rounds the output size up (a last window that starts inside the input or its left
// padding).
Tensor max_pool2d(const Tensor& x, Size2 kernel_size, std::optional<Size2> stride = std::nullopt,
                  Size2 padding = 0, Size2 dilation = 1, bool ceil_mode = false);
// The values and, as Ids of the same shape, where each came from: the flat index h·W + w within
// its plane, as torch's return_indices=True.
struct PoolWithIndices {
  Tensor values;
  Ids indices;
};
PoolWithIndices max_pool2d_with_indices(const Tensor& x, Size2 kernel_size,
                                        std::optional<Size2> stride = std::nullopt,
                                        Size2 padding = 0, Size2 dilation = 1,
                                        bool ceil_mode = false);
// [N, C, L] or [C, L]; indices along L.
Tensor max_pool1d(const Tensor& x, int64_t kernel_size,
                  std::optional<int64_t> stride = std::nullopt, int64_t padding = 0,
                  int64_t dilation = 1, bool ceil_mode = false);
PoolWithIndices max_pool1d_with_indices(const Tensor& x, int64_t kernel_size,
                                        std::optional<int64_t> stride = std::nullopt,
                                        int64_t padding = 0, int64_t dilation = 1,
                                        bool ceil_mode = false);

// --- average pooling ------------------------------------------------------------------------
// Σ window / divisor, summed in x's dtype: the divisor is the window's size including padding
// (count_include_pad, the window clipped at the padded input's end), or the elements inside the
// input, or divisor_override (nonzero). Its gradient is dY / divisor on each element of the window.
Tensor avg_pool2d(const Tensor& x, Size2 kernel_size, std::optional<Size2> stride = std::nullopt,
                  Size2 padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor avg_pool1d(const Tensor& x, int64_t kernel_size,
                  std::optional<int64_t> stride = std::nullopt, int64_t padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true);

// --- adaptive pooling: output_size [OH, OW] windows, rows floor(i·H/OH) .. ceil((i+1)·H/OH) ---
// A 1×1 adaptive_avg_pool2d is mean(x, {-2, -1}, true), recorded as mean_dims, as torch computes
// it.
Tensor adaptive_avg_pool2d(const Tensor& x, Size2 output_size);
// adaptive_max_pool2d picks as max_pool2d does (the first maximum, a NaN wins).
Tensor adaptive_max_pool2d(const Tensor& x, Size2 output_size);
PoolWithIndices adaptive_max_pool2d_with_indices(const Tensor& x, Size2 output_size);

// --- interpolation (4-D input [N, C, H, W]) ---------------------------------------------------
enum class InterpolateMode { Nearest, Bilinear };
struct Scale2 {
  double h, w;
  Scale2(double both) : h(both), w(both) {}  // NOLINT: {.scale_factor = 2.0}
  Scale2(double h_, double w_) : h(h_), w(w_) {}
};
struct InterpolateOptions {
  std::optional<Size2> size = std::nullopt;           // exactly one of size and scale_factor
  std::optional<Scale2> scale_factor = std::nullopt;  // output floor(H·scale), floor(W·scale)
  InterpolateMode mode = InterpolateMode::Nearest;
  // Bilinear only (an Error with nearest, as torch): corners' centres aligned; default false.
  std::optional<bool> align_corners = std::nullopt;
  // false (torch's None): the scale_factor itself maps output to input coordinates (1/scale);
  // true: the sizes do (in/out), as when `size` is given.
  bool recompute_scale_factor = false;
};
// torch.nn.functional.interpolate: nearest reads x[floor(i·s)] (s = in/out, or 1/scale_factor;
// clamped to the last row); bilinear averages the four neighbours of
// (i + 0.5)·s − 0.5 (clamped at 0), or i·(in − 1)/(out − 1) with align_corners.
Tensor interpolate(const Tensor& x, const InterpolateOptions& options);

}  // namespace tapegrad
