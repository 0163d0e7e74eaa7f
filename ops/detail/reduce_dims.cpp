// Planning a reduction over a list of dims (reduce_dims.h).
#include <tapegrad/ops/detail/reduce_dims.h>

#include <algorithm>
#include <vector>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

DimsReduction plan_dims_reduction(const char* op, const Tensor& x, std::span<const int> dims,
                                  bool keepdim) {
  const int rank = x.shape().rank();
  const int lo = rank == 0 ? -1 : -rank, hi = rank == 0 ? 0 : rank - 1;
  uint32_t mask = 0;
  for (const int dim : dims) {
    if (dim < lo || dim > hi) {
      throw_unary_error(op, x,
                        "dim " + std::to_string(dim) + " is out of range for rank " +
                            std::to_string(rank) + " (expected " + std::to_string(lo) + ".." +
                            std::to_string(hi) + ")");
    }
    const int d = dim < 0 ? dim + (rank == 0 ? 1 : rank) : dim;
    if ((mask >> d) & 1u) {
      throw_unary_error(op, x,
                        "dim " + std::to_string(d) + " appears more than once in the list of dims");
    }
    mask |= 1u << d;
  }
  if (dims.empty()) mask = rank == 0 ? 1u : (1u << rank) - 1u;
  return replan_dims_reduction(x.shape(), {mask, keepdim});
}

DimsReduction replan_dims_reduction(const Shape& s, ReducedDims dims) {
  DimsReduction r;
  r.dims = dims;
  r.kept_shape = s;
  std::array<int64_t, kMaxRank> out{};
  int out_rank = 0;
  for (int d = 0; d < s.rank(); ++d) {
    if ((dims.mask >> d) & 1u) {
      r.group *= s[d];
      r.kept_shape[d] = 1;
      if (dims.keepdim) out[static_cast<size_t>(out_rank++)] = 1;
    } else {
      out[static_cast<size_t>(out_rank++)] = s[d];
    }
  }
  r.out_shape = Shape(std::span<const int64_t>(out.data(), static_cast<size_t>(out_rank)));
  return r;
}

std::string reduced_dims_text(const Node& x, ReducedDims dims) {
  const int rank = x.shape.rank();
  std::string text;
  int count = 0;
  for (int d = 0; d < rank; ++d) {
    if (!((dims.mask >> d) & 1u)) continue;
    text += (count++ ? ", " : "") + std::to_string(d == rank - 1 && rank > 1 ? -1 : d);
  }
  if (rank == 0 || count == rank) {
    text = "all dims";
  } else {
    text = (count == 1 ? "dim " : "dims (") + text + (count == 1 ? "" : ")");
  }
  return text + (dims.keepdim ? ", keepdim" : "");
}

std::vector<int> reduced_dims_list(ReducedDims dims, int rank) {
  std::vector<int> list;
  for (int d = 0; d < std::max(rank, 1); ++d) {
    if ((dims.mask >> d) & 1u) list.push_back(d);
  }
  return list;
}

Tensor kept_view(const Tensor& dy, Shape kept_shape) {
  if (dy.shape() == kept_shape) return dy;
  return reshape(dy, kept_shape.dims());
}

}  // namespace tapegrad
