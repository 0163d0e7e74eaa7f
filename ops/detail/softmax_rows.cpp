// softmax_row / softmax_row_backward: the softmax op's row arithmetic, compiled once.
#include "ops/detail/softmax_rows.h"

#include "ops/detail/op_util.h"

namespace tapegrad::detail {

template <class T>
void softmax_row(const T* x, T* y, int64_t n) {
  ConstArrayMap<T> xr(x, n);
  ArrayMap<T> yr(y, n);
  const T m = xr.template maxCoeff<Eigen::PropagateNaN>();
  yr = (xr - m).exp();
  const T s = T(1) / yr.sum();
  yr *= s;
}

template <class T>
void softmax_row_backward(const T* y, const T* dy, T* dx, int64_t n, bool overwrite) {
  ConstArrayMap<T> yr(y, n), dyr(dy, n);
  const T s = (dyr * yr).sum();
  if (overwrite) {
    ArrayMap<T>(dx, n) = yr * (dyr - s);
  } else {
    ArrayMap<T>(dx, n) += yr * (dyr - s);
  }
}

template void softmax_row<float>(const float*, float*, int64_t);
template void softmax_row<double>(const double*, double*, int64_t);
template void softmax_row_backward<float>(const float*, const float*, float*, int64_t, bool);
template void softmax_row_backward<double>(const double*, const double*, double*, int64_t, bool);

}  // namespace tapegrad::detail
