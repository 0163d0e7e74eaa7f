// The loops of pooling and resampling over planes [P, H, W] (a 1-D op is H = 1): max and average
// windows, adaptive average windows, nearest and bilinear interpolation, each with its adjoint
// (the backward), in torch 1.13's CPU order of operations (aten/src/ATen/native/cpu/
// MaxPoolKernel.cpp, AvgPoolKernel.cpp, AdaptiveAvgPoolKernel.cpp, UpSampleKernel.cpp).
#pragma once

#include <cstdint>

namespace tapegrad::pool {

// Where each output element's window lies: output (oh, ow) reads rows oh·stride_h − pad_h +
// i·dilation_h (i < kernel_h) and the columns alike, those inside the input.
struct Geometry {
  int64_t planes = 0, in_h = 1, in_w = 0, out_h = 1, out_w = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
};

// y = the window's maximum, index = its position in the plane (h·in_w + w): the first maximum in
// scan order, except that a NaN wins and a later NaN replaces it (torch's `val > max || isnan`).
template <class T>
void max_forward(const Geometry& g, const T* x, T* y, int64_t* index);
// dx[index] += dy, output by output, plane by plane.
template <class T>
void max_backward(const Geometry& g, const T* dy, const int64_t* index, T* dx);

// What an average divides by: the window's size including padding (count_include_pad, clipped at
// the padded input's end), its size inside the input, or divisor_override when it is nonzero.
struct AvgOptions {
  bool count_include_pad = true;
  int64_t divisor_override = 0;
};
// y = Σ window / divisor (summed in T, in scan order; 0 for a window wholly in padding).
// With add, y += that instead (the adjoint of avg_backward).
template <class T>
void avg_forward(const Geometry& g, const AvgOptions& o, const T* x, T* y, bool add = false);
// dx[window] += dy / divisor.
template <class T>
void avg_backward(const Geometry& g, const AvgOptions& o, const T* dy, T* dx);

// Adaptive windows: rows floor(oh·in_h / out_h) .. ceil((oh + 1)·in_h / out_h), columns alike
// (only planes and the sizes of g are read). y = Σ window / kh / kw.
template <class T>
void adaptive_avg_forward(const Geometry& g, const T* x, T* y, bool add = false);
template <class T>
void adaptive_avg_backward(const Geometry& g, const T* dy, T* dx);
// Adaptive windows' maximum, with max_forward's rule for ties and NaN; backward is max_backward.
template <class T>
void adaptive_max_forward(const Geometry& g, const T* x, T* y, int64_t* index);

// One axis of an interpolation: output i reads inputs i0[i] and i1[i] with weights l0[i], l1[i]
// (nearest: i1 = i0, l0 = 1, l1 = 0).
struct Axis {
  const int64_t* i0;
  const int64_t* i1;
  const double* l0;  // values of T, held as double (exact)
  const double* l1;
};
// y[oh, ow] = lh0·(lw0·x[h0, w0] + lw1·x[h0, w1]) + lh1·(lw0·x[h1, w0] + lw1·x[h1, w1]), each
// a·wa + b·wb as fma(a, wa, b·wb) (torch's order, as its build fuses it); nearest reads x[h0, w0]
// alone. With add, y += that.
template <class T>
void interpolate_forward(const Geometry& g, const Axis& h, const Axis& w, bool nearest, const T* x,
                         T* y, bool add = false);
// The adjoint: dx[h0, w0] = fma(lh0·lw0, dy, dx[h0, w0]), and the three other corners alike
// (nearest: += dy).
template <class T>
void interpolate_backward(const Geometry& g, const Axis& h, const Axis& w, bool nearest,
                          const T* dy, T* dx);

}  // namespace tapegrad::pool
