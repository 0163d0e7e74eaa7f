// vmath's kernels per instruction-set level (kernels/vmath/vmath_isa.cpp, built once per level
// with that level's flags), as vmath.cpp picks them: one table of function pointers per level and
// type. Only plain structs and declarations here (kernels/cpu/isa_level.h says why).
#pragma once

#include <cstdint>

#include <tapegrad/kernels/cpu/isa_declare.h>

namespace tapegrad::vmath::levels {

template <class T>
struct Kernels {
  void (*exp)(const T*, T*, int64_t);
  void (*expm1)(const T*, T*, int64_t);
  void (*log)(const T*, T*, int64_t);
  void (*tanh)(const T*, T*, int64_t);
  void (*cos)(const T*, T*, int64_t);
  void (*sin)(const T*, T*, int64_t);
  void (*pow_base)(T, const T*, T*, int64_t);  // float only (null for double)
  void (*masked_scale)(const T*, const uint8_t*, T, T*, int64_t, bool);
  T (*sum)(const T*, int64_t);
  void (*sigmoid)(const T*, T*, int64_t);
  void (*gelu_tanh)(const T*, T*, T*, int64_t);  // x, y, tanh u (or null), n
  void (*gelu_tanh_backward)(const T*, const T*, const T*, T*, int64_t);  // x, tanh u, dy, dx, n
  void (*softmax_rows)(const T*, T*, int64_t, int64_t);
  void (*softmax_rows_backward)(const T*, const T*, T*, int64_t, int64_t, bool);
  void (*logsumexp_rows)(const T*, T*, int64_t, int64_t);
  void (*log_softmax_rows)(const T*, const T*, T*, int64_t, int64_t);
  void (*layer_norm_rows)(const T*, const T*, const T*, T*, T*, T*, int64_t, int64_t, double);
  void (*layer_norm_rows_backward)(const T*, const T*, const T*, const T*, const T*, T*, T*, T*,
                                   int64_t, int64_t);
  void (*map)(int, const T*, T*, int64_t);  // the vmath::Unary function numbered by the int
  void (*map2)(int, const T*, const T*, T*, int64_t);  // the vmath::Binary one
};

// The tables:
// - baseline (SSE2; the only level on other CPUs): the C library's functions, one element at a
//   time, as torch 1.13's DEFAULT kernels call them (std::exp, std::tanh, ...); sums over 8 float
//   or 4 double lanes (torch's Vectorized width there); no fused multiply-adds.
// - AVX2 and FMA: SLEEF's 8-float / 4-double functions (torch's AVX2 kernels'); sums over 8 / 4
//   lanes.
// - AVX-512: SLEEF's 16-float / 8-double functions (torch's AVX512 kernels'; their bits equal the
//   AVX2 ones'), masked tails; sums over 16 / 8 lanes.
TAPEGRAD_DECLARE_PER_LEVEL(vmath, extern const Kernels<float> kFloat;
                           extern const Kernels<double> kDouble;)

}  // namespace tapegrad::vmath::levels
