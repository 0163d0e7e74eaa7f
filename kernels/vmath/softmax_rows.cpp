// softmax_row / softmax_row_backward: the softmax op's row arithmetic, compiled once.
#include <tapegrad/kernels/vmath/softmax_rows.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include <Eigen/Core>

#include <tapegrad/kernels/vec.h>
#include <tapegrad/kernels/vmath/vmath.h>

namespace tapegrad::detail {

namespace {

// Σ x in the order of torch 1.13's vec::reduce_all for its AVX2 kernels (Debian's build): rows
// shorter than a vector (8 floats, 4 doubles) add left to right; longer ones keep one partial sum
// per lane (the tail added to the first lanes), then fold the lanes: floats pairwise
// ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)) (VecReduceAllSIMD<float>), doubles left to
// right. n >= 1. The lanes are one 32-byte vector (torch's AVX2 width for either type).
template <class T>
T torch_sum(const T* x, int64_t n) {
  constexpr int kLanes = std::is_same_v<T, float> ? 8 : 4;
  T s = x[0];
  if (n < kLanes) {
    for (int64_t j = 1; j < n; ++j) s += x[j];
    return s;
  }
  typedef T Lanes __attribute__((vector_size(32)));
  Lanes acc, v;
  std::memcpy(&acc, x, sizeof acc);
  int64_t d = kLanes;
  for (; d + kLanes <= n; d += kLanes) {
    std::memcpy(&v, x + d, sizeof v);
    acc += v;
  }
  if (d < n) {  // the tail into the first lanes; -0 leaves the others' sums as they are
    v = -Lanes{};
    std::memcpy(&v, x + d, static_cast<size_t>(n - d) * sizeof(T));
    acc += v;
  }
  if constexpr (kLanes == 8) {
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
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
  // The max, a vector of lanes at a time: a max is the same in any order (but for the sign of a
  // zero max, which x − max and so the result do not see). It skips NaNs, where torch's
  // propagates them: either way a NaN (or +inf) entry makes x − m NaN there, so the sum and the
  // whole row are NaN.
  constexpr int64_t L = kLanes<T>;
  constexpr T kMinusInf = -std::numeric_limits<T>::infinity();
  T m = kMinusInf;
  int64_t j = 0;
  if (n >= L) {
    Vec<T> lanes = Vec<T>{} + kMinusInf, v;
    for (; j + L <= n; j += L) {
      vload(v, x + j);
      lanes = lanes < v ? v : lanes;
    }
    m = reduce_lanes<T>(lanes, [](Vec<T>& a, const Vec<T>& b) { a = a < b ? b : a; });
  }
  for (; j < n; ++j) m = m < x[j] ? x[j] : m;
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] - m;
  vmath::exp(y, y, n);
  const T s = T(1) / torch_sum(y, n);
  for (int64_t i = 0; i < n; ++i) y[i] *= s;
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
