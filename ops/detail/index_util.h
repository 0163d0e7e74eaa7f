// What the indexing ops (index_select, gather, scatter, scatter_add, index_add) share: checking
// index values before any read, keeping the indices on the tape, and walking index positions.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/ops/detail/layout_copy.h>

namespace tapegrad {

// Indices kept on the tape for the backward (a copy in the tape's arena).
struct SavedIndex {
  Shape shape;
  const int64_t* values;
};
SavedIndex save_index(Tape& tape, const Ids& index);
Ids to_ids(const SavedIndex& index);

// An Error naming op, x and the first value of `index` outside [0, size), with its position
// ("index 7 at index[1, 2] is out of range for dim 1 of size 4"): no index is read unchecked.
void check_index_values(const char* op, const Tensor& x, const Ids& index, int dim, int64_t size);

// gather's and scatter's shape rule, as torch's: index has x's rank, index.size(d) <= x.size(d)
// for d != dim and, when src is given (same dtype as x), index.size(d) <= src.size(d) for every d.
void check_gather_shapes(const char* op, const Tensor& x, int dim, const Ids& index,
                         const Tensor* src);

// The size of x along its (normalised) dim `d`; 1 for a 0-dim x, as torch indexes it.
inline int64_t indexed_size(const Tensor& x, int d) {
  return x.rank() == 0 ? 1 : x.shape()[d];
}

// index's shape, for messages ("index [2, 3]").
std::string index_text(const Ids& index);

// Calls f(p, offset) for every position p of `index_shape` (the same rank as `x_shape`, or both
// 0-dim), in order: offset is the element of x at p's coordinates with the one along `dim`
// replaced by index[p] (gather reads it, scatter writes it). Walked a row of the last dim at a
// time, the other dims' part of the offset computed once per row.
template <class F>
void for_each_indexed(const Shape& index_shape, const Shape& x_shape, int dim, const int64_t* index,
                      F&& f) {
  const int rank = index_shape.rank();
  if (rank == 0) {
    f(int64_t{0}, int64_t{0});
    return;
  }
  const int64_t total = index_shape.numel();
  if (total == 0) return;
  const std::array<int64_t, kMaxRank> strides = x_shape.strides();
  const int last = rank - 1;
  const int64_t n = index_shape[last], step = strides[static_cast<size_t>(last)];
  const int64_t dim_stride = strides[static_cast<size_t>(dim)];
  std::array<int64_t, kMaxRank> at{};
  for (int64_t p = 0; p < total; p += n) {
    int64_t base = 0;
    for (int d = 0; d < last; ++d) {
      if (d != dim) base += at[static_cast<size_t>(d)] * strides[static_cast<size_t>(d)];
    }
    const int64_t* idx = index + p;
    if (dim == last) {
      for (int64_t i = 0; i < n; ++i) f(p + i, base + idx[i] * step);
    } else {
      for (int64_t i = 0; i < n; ++i) f(p + i, base + idx[i] * dim_stride + i * step);
    }
    for (int d = last - 1; d >= 0; --d) {
      const auto k = static_cast<size_t>(d);
      if (++at[k] < index_shape[d]) break;
      at[k] = 0;
    }
  }
}

}  // namespace tapegrad
