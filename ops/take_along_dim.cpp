// take_along_dim: x's elements picked by indices along a dim, x and the indices broadcast in the
// other dims (torch.take_along_dim); without a dim, from the flattened x. Like torch's, it is
// made of other ops (expand, flatten, gather), recorded as such.
#include <vector>

#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/index_util.h>
#include <tapegrad/ops/detail/view_op.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// index broadcast to `shape` (same rank; its sizes 1 or equal).
Ids broadcast_ids(const Ids& index, const Shape& shape) {
  if (index.shape() == shape) return index;
  const Strides strides = broadcast_strides(index.shape(), shape);
  std::vector<int64_t> values(static_cast<size_t>(shape.numel()));
  layout::for_each_position(shape.dims(), [&](int64_t o, const std::array<int64_t, kMaxRank>& at) {
    int64_t i = 0;
    for (int d = 0; d < shape.rank(); ++d) {
      i += at[static_cast<size_t>(d)] * strides[static_cast<size_t>(kMaxRank - shape.rank() + d)];
    }
    values[static_cast<size_t>(o)] = index[i];
  });
  return Ids(shape, std::move(values));
}

}  // namespace

Tensor take_along_dim(const Tensor& x, const Ids& indices, std::optional<int> dim) {
  if (!dim) {
    const Ids flat(Shape{indices.numel()},
                   std::vector<int64_t>(indices.values().begin(), indices.values().end()));
    check_index_values("take_along_dim", x, indices, 0, x.numel());
    return gather(flatten(x), 0, flat);
  }
  if (x.rank() == 0) {
    throw_unary_error("take_along_dim", x, "cannot index a 0-dim tensor along a dim");
  }
  const int d = layout::checked_dim("take_along_dim", "x", x, *dim);
  if (indices.rank() != x.rank()) {
    throw_unary_error("take_along_dim", x,
                      index_text(indices) + " must have x's rank " + std::to_string(x.rank()));
  }
  // Broadcast all dims but d: x keeps its size along d, the indices theirs.
  std::array<int64_t, kMaxRank> xs{}, is{};
  for (int k = 0; k < x.rank(); ++k) {
    const auto i = static_cast<size_t>(k);
    const int64_t a = x.shape()[k], b = indices.shape()[k];
    if (k != d && a != b && a != 1 && b != 1) {
      throw_unary_error(
          "take_along_dim", x,
          index_text(indices) + " does not broadcast with x in dim " + std::to_string(k));
    }
    xs[i] = k == d ? a : (a == 1 ? b : a);
    is[i] = k == d ? b : xs[i];
  }
  const auto rank = static_cast<size_t>(x.rank());
  const Shape x_shape(std::span<const int64_t>(xs.data(), rank));
  const Shape index_shape(std::span<const int64_t>(is.data(), rank));
  check_index_values("take_along_dim", x, indices, *dim, x.shape()[d]);
  const Tensor source = x_shape == x.shape() ? x : expand(x, x_shape);
  if (indices.shape() == index_shape) return gather(source, d, indices);  // no copy of them
  return gather(source, d, broadcast_ids(indices, index_shape));
}

}  // namespace tapegrad
