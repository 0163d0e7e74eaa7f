// Broadcasting with PyTorch's rules: shape inference, broadcast strides, operand kinds and the
// gradient reduction over broadcast dims.
#include <tapegrad/ops/detail/broadcast.h>

#include <algorithm>

#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>

namespace tapegrad {

Shape broadcast_shape(const Shape& a, const Shape& b, bool* ok) {
  const int rank = std::max(a.rank(), b.rank());
  std::array<int64_t, kMaxRank> dims{};
  *ok = true;
  for (int d = 0; d < rank; ++d) {
    const int da = a.rank() - rank + d, db = b.rank() - rank + d;
    const int64_t x = da >= 0 ? a[da] : 1, y = db >= 0 ? b[db] : 1;
    if (x != y && x != 1 && y != 1) *ok = false;
    dims[static_cast<size_t>(d)] = x == 1 ? y : x;
  }
  return Shape(std::span<const int64_t>(dims.data(), static_cast<size_t>(rank)));
}

Shape broadcast_shape(const char* op, const Tensor& a, const char* joiner, const Tensor& b) {
  bool ok = false;
  Shape out = broadcast_shape(a.shape(), b.shape(), &ok);
  if (!ok) {
    for (int d = -1; d >= -std::min(a.rank(), b.rank()); --d) {
      if (a.size(d) != b.size(d) && a.size(d) != 1 && b.size(d) != 1) {
        throw_binary_error(op, a, joiner, b,
                           "cannot broadcast (dim " + std::to_string(d) + ": " +
                               std::to_string(a.size(d)) + " vs " + std::to_string(b.size(d)) +
                               ")");
      }
    }
  }
  return out;
}

Strides broadcast_strides(const Shape& shape, const Shape& out) {
  Strides result{};
  const Strides own = shape.strides();
  const int offset = kMaxRank - out.rank();
  for (int d = 0; d < shape.rank(); ++d) {
    const int od = out.rank() - shape.rank() + d;  // the dim of `out` this dim lines up with
    result[static_cast<size_t>(offset + od)] = shape[d] == 1 ? 0 : own[static_cast<size_t>(d)];
  }
  return result;
}

BroadcastOperand classify_broadcast(const Shape& x, const Shape& out) {
  const int64_t n = x.numel();
  if (n == out.numel()) return {BroadcastKind::Same, n};
  if (n == 1) return {BroadcastKind::Scalar, 1};
  // x right-aligned against out; its missing leading dims read as 1.
  std::array<int64_t, kMaxRank> padded;
  padded.fill(1);
  const int offset = out.rank() - x.rank();
  for (int d = 0; d < x.rank(); ++d) padded[static_cast<size_t>(offset + d)] = x[d];
  int first = 0;  // the first dim of x that is not 1
  while (padded[static_cast<size_t>(first)] == 1) ++first;
  int last = out.rank() - 1;  // the last dim of x that is not 1
  while (padded[static_cast<size_t>(last)] == 1) --last;
  bool row = true, column = true;
  for (int d = first; d < out.rank(); ++d) row = row && padded[static_cast<size_t>(d)] == out[d];
  for (int d = 0; d <= last; ++d) column = column && padded[static_cast<size_t>(d)] == out[d];
  if (row) return {BroadcastKind::Row, n};
  if (column) return {BroadcastKind::Column, out.numel() / n};
  return {BroadcastKind::General, 0};
}

template <class T>
void reduce_broadcast(const T* src, const Shape& out, T* dst, const Shape& dst_shape,
                      bool subtract) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const T sign = subtract ? T(-1) : T(1);  // exact: only flips signs
  const BroadcastOperand kind = classify_broadcast(dst_shape, out);
  switch (kind.kind) {
    case BroadcastKind::Same:
      if (subtract) {
        ArrayMap<T>(dst, n) -= ConstArrayMap<T>(src, n);
      } else {
        ArrayMap<T>(dst, n) += ConstArrayMap<T>(src, n);
      }
      return;
    case BroadcastKind::Scalar:
      dst[0] += sign * ConstArrayMap<T>(src, n).sum();
      return;
    case BroadcastKind::Row: {
      const int64_t w = kind.inner;
      ArrayMap<T>(dst, w) +=
          sign * ConstMatrixMap<T>(src, n / w, w).colwise().sum().transpose().array();
      return;
    }
    case BroadcastKind::Column: {
      const int64_t w = kind.inner;
      ArrayMap<T>(dst, n / w) += sign * ConstMatrixMap<T>(src, n / w, w).rowwise().sum().array();
      return;
    }
    case BroadcastKind::General: {
      const Strides s = broadcast_strides(dst_shape, out);
      for_each_broadcast(out, s, s,
                         [&](int64_t o, int64_t i, int64_t) { dst[i] += sign * src[o]; });
      return;
    }
  }
}

template void reduce_broadcast<float>(const float*, const Shape&, float*, const Shape&, bool);
template void reduce_broadcast<double>(const double*, const Shape&, double*, const Shape&, bool);

}  // namespace tapegrad
