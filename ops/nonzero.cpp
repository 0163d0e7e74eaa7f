// nonzero: the coordinates of the nonzero elements of a tensor or of Ids (torch.nonzero), as Ids
// [n, rank]; not recorded (integer results carry no gradient).
#include <span>
#include <vector>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// One row of coordinates per element for which is_nonzero(i) holds, in row-major order.
template <class F>
Ids nonzero_positions(const Shape& shape, F&& is_nonzero) {
  const int rank = shape.rank();
  std::vector<int64_t> rows;
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  const int64_t n = shape.numel();
  for (int64_t i = 0; i < n; ++i) {
    if (is_nonzero(i)) rows.insert(rows.end(), index.begin(), index.end());
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < shape[d]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  int64_t count = 0;
  if (rank == 0) {
    count = n > 0 && is_nonzero(0) ? 1 : 0;  // torch: [1, 0] or [0, 0]
  } else {
    count = static_cast<int64_t>(rows.size()) / rank;
  }
  return Ids(Shape{count, rank}, std::move(rows));
}

}  // namespace

Ids nonzero(const Tensor& x) {
  return dispatch(x.dtype(), [&]<class T>() {
    const T* v = x.data<T>();
    return nonzero_positions(x.shape(), [&](int64_t i) { return v[i] != T(0); });  // NaN counts
  });
}

Ids nonzero(const Ids& x) {
  const std::span<const int64_t> v = x.values();
  return nonzero_positions(x.shape(), [&](int64_t i) { return v[static_cast<size_t>(i)] != 0; });
}

}  // namespace tapegrad
