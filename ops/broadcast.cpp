// Broadcasting with PyTorch's rules: shape inference and broadcast strides.
#include "ops/broadcast.h"

#include <algorithm>

#include "ops/op_util.h"

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
  Strides result{0, 0, 0, 0};
  const Strides own = shape.strides();
  const int offset = kMaxRank - out.rank();
  for (int d = 0; d < shape.rank(); ++d) {
    const int od = out.rank() - shape.rank() + d;  // the dim of `out` this dim lines up with
    result[static_cast<size_t>(offset + od)] = shape[d] == 1 ? 0 : own[static_cast<size_t>(d)];
  }
  return result;
}

}  // namespace tapegrad
