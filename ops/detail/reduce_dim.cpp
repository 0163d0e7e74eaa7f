// Planning a reduction along one dim: the dim check, the [outer, size, inner] view, the out shape.
#include <tapegrad/ops/detail/reduce_dim.h>

#include <array>
#include <cmath>
#include <functional>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_rows.h>

namespace tapegrad {

DimReduction plan_dim_reduction(const char* op, const Tensor& x, int dim, bool keepdim) {
  const Shape& s = x.shape();
  const int rank = s.rank();
  const int lo = rank == 0 ? -1 : -rank, hi = rank == 0 ? 0 : rank - 1;
  if (dim < lo || dim > hi) {
    throw_unary_error(op, x,
                      "dim " + std::to_string(dim) + " is out of range for rank " +
                          std::to_string(rank) + " (expected " + std::to_string(lo) + ".." +
                          std::to_string(hi) + ")");
  }
  DimReduction r;
  r.dim = dim < 0 ? dim + rank : dim;
  if (rank == 0) return {0, {}, Shape{}};  // a scalar reduces to itself, as in torch
  std::array<int64_t, kMaxRank> dims{};
  int out_rank = 0;
  for (int d = 0; d < rank; ++d) {
    if (d < r.dim) r.view.outer *= s[d];
    if (d > r.dim) r.view.inner *= s[d];
    if (d != r.dim) {
      dims[static_cast<size_t>(out_rank++)] = s[d];
    } else if (keepdim) {
      dims[static_cast<size_t>(out_rank++)] = 1;
    }
  }
  r.view.size = s[r.dim];
  r.out_shape = Shape(std::span<const int64_t>(dims.data(), static_cast<size_t>(out_rank)));
  return r;
}

void arg_extreme_along(const char* op, const Tensor& x, int dim, bool keepdim, bool largest,
                       Ids& out) {
  const DimReduction r = plan_dim_reduction(op, x, dim, keepdim);
  const DimView v = r.view;
  if (v.size == 0) {
    throw_unary_error(
        op, x,
        std::string("cannot take the ") + op + " along dim " + std::to_string(dim) + " of size 0");
  }
  out.resize(r.out_shape);
  int64_t* ids = out.values().data();
  dispatch(x.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    const auto scan = [&](auto better) {
      if (v.inner == 1) {
        for (int64_t o = 0; o < v.outer; ++o) {
          ids[o] = largest ? row_extreme_index<true>(xv + o * v.size, v.size)
                           : row_extreme_index<false>(xv + o * v.size, v.size);
        }
        return;
      }
      for (int64_t o = 0; o < v.outer; ++o) {
        for (int64_t i = 0; i < v.inner; ++i) {
          const T* row = xv + o * v.size * v.inner + i;
          int64_t best = 0;
          for (int64_t k = 1; k < v.size && !std::isnan(row[best * v.inner]); ++k) {
            const T e = row[k * v.inner];
            if (better(e, row[best * v.inner]) || std::isnan(e)) best = k;
          }
          ids[o * v.inner + i] = best;
        }
      }
    };
    if (largest) {
      scan(std::greater<T>());
    } else {
      scan(std::less<T>());
    }
  });
}

std::string reduction_text(int dim, const Node& x, const Node& y) {
  const int rank = x.shape.rank();
  return dim_text(dim, rank) + (y.shape.rank() == rank ? ", keepdim" : "");
}

}  // namespace tapegrad
