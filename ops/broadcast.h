// Broadcasting with PyTorch's rules: the output shape, and index walks for forward and backward.
#pragma once

#include <array>
#include <cstdint>

#include "graph/tape.h"

namespace tapegrad {

using Strides = std::array<int64_t, kMaxRank>;

// The broadcast shape of a and b (dims aligned on the right; each pair equal or one of them 1).
// Throws `op: a [2, 3] <joiner> b [4]: cannot broadcast (dim -1: 3 vs 4)`.
Shape broadcast_shape(const char* op, const Tensor& a, const char* joiner, const Tensor& b);
Shape broadcast_shape(const Shape& a, const Shape& b, bool* ok);

// The element strides of `shape` when read as `out` (right-aligned, 0 along broadcast dims),
// padded to kMaxRank dims with `out` on the right: index with out's multi-index.
Strides broadcast_strides(const Shape& shape, const Shape& out);

// Calls f(out_index, a_index, b_index) for every element of `out`, in row-major order.
template <class F>
void for_each_broadcast(const Shape& out, const Strides& a_strides, const Strides& b_strides,
                        F&& f) {
  std::array<int64_t, kMaxRank> dims{1, 1, 1, 1};
  const int offset = kMaxRank - out.rank();
  for (int d = 0; d < out.rank(); ++d) dims[static_cast<size_t>(offset + d)] = out[d];
  int64_t o = 0;
  for (int64_t i0 = 0; i0 < dims[0]; ++i0) {
    for (int64_t i1 = 0; i1 < dims[1]; ++i1) {
      for (int64_t i2 = 0; i2 < dims[2]; ++i2) {
        const int64_t a_base = i0 * a_strides[0] + i1 * a_strides[1] + i2 * a_strides[2];
        const int64_t b_base = i0 * b_strides[0] + i1 * b_strides[1] + i2 * b_strides[2];
        for (int64_t i3 = 0; i3 < dims[3]; ++i3, ++o) {
          f(o, a_base + i3 * a_strides[3], b_base + i3 * b_strides[3]);
        }
      }
    }
  }
}

}  // namespace tapegrad
