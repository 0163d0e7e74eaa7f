// softmax_row / softmax_row_backward: the softmax op's row arithmetic, compiled once.
#include "kernels/softmax_rows.h"

#include <algorithm>
#include <limits>
#include <type_traits>

#include <Eigen/Core>

#include "kernels/vmath.h"

namespace tapegrad::detail {

namespace {

// Σ x in the order of torch 1.13's vec::reduce_all for its AVX2 kernels (Debian's build): rows
// shorter than a vector (8 floats, 4 doubles) add left to right; longer ones keep one partial sum
// per lane (the tail added to the first lanes), then fold the lanes: floats pairwise
// ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)) (VecReduceAllSIMD<float>), doubles left to
// right. n >= 1.
template <class T>
T torch_sum(const T* x, int64_t n) {
  constexpr int kLanes = std::is_same_v<T, float> ? 8 : 4;
  T s = x[0];
  if (n < kLanes) {
    for (int64_t j = 1; j < n; ++j) s += x[j];
    return s;
  }
  T acc[kLanes];
  for (int l = 0; l < kLanes; ++l) acc[l] = x[l];
  int64_t d = kLanes;
  for (; d + kLanes <= n; d += kLanes) {
    for (int l = 0; l < kLanes; ++l) acc[l] += x[d + l];
  }
  for (int l = 0; d + l < n; ++l) acc[l] += x[d + l];
  if constexpr (kLanes == 8) {
    for (int l = 0; l < 4; ++l) acc[l] += acc[l + 4];
    return (acc[0] + acc[2]) + (acc[1] + acc[3]);
  } else {
    return ((acc[0] + acc[1]) + acc[2]) + acc[3];
  }
}

}  // namespace

// torch's _vec_softmax_lastdim: max, exp(x − max) through SLEEF (vmath, torch's own exp), the sum
// in torch's order, 1 / sum, times it. Every step is elementwise or in a fixed order, so the bits
// do not depend on where the row lies in memory.
template <class T>
void softmax_row(const T* x, T* y, int64_t n) {
  if (n == 0) return;
  // The max in lanes (a select the compiler vectorises). It skips NaNs, where torch's propagates
  // them: either way a NaN (or +inf) entry makes x − m NaN there, so the sum and the whole row
  // are NaN.
  constexpr int kLanes = 16;
  T lanes[kLanes];
  std::fill(lanes, lanes + kLanes, -std::numeric_limits<T>::infinity());
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] = lanes[l] < x[j + l] ? x[j + l] : lanes[l];
  }
  for (int l = 0; j < n; ++j, ++l) lanes[l] = lanes[l] < x[j] ? x[j] : lanes[l];
  T m = lanes[0];
  for (int l = 1; l < kLanes; ++l) m = m < lanes[l] ? lanes[l] : m;
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] - m;
  vmath::exp(y, y, n);
  const T s = T(1) / torch_sum(y, n);
  for (int64_t j = 0; j < n; ++j) y[j] *= s;
}

template <class T>
void softmax_row_backward(const T* y, const T* dy, T* dx, int64_t n, bool overwrite) {
  using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
  Eigen::Map<const Array> yr(y, n), dyr(dy, n);
  const T s = (dyr * yr).sum();
  if (overwrite) {
    Eigen::Map<Array>(dx, n) = yr * (dyr - s);
  } else {
    Eigen::Map<Array>(dx, n) += yr * (dyr - s);
  }
}

template void softmax_row<float>(const float*, float*, int64_t);
template void softmax_row<double>(const double*, double*, int64_t);
template void softmax_row_backward<float>(const float*, const float*, float*, int64_t, bool);
template void softmax_row_backward<double>(const double*, const double*, double*, int64_t, bool);

}  // namespace tapegrad::detail
