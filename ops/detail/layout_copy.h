// The copy loops the layout ops share: a dim swap of a contiguous tensor, and block copies.
// Each copies (forward) or adds (backward, Accumulate = true) and allocates nothing.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/strided_loop.h>

namespace tapegrad::layout {

// dst = src (or dst += src) for n contiguous elements.
template <bool Accumulate, class T>
inline void copy_run(const T* src, T* dst, int64_t n) {
  if constexpr (Accumulate) {
    for (int64_t i = 0; i < n; ++i) dst[i] += src[i];  // vectorised by the compiler
  } else {
    if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
  }
}

// dst [cols, rows] = srcᵀ (or dst += srcᵀ) for `count` row-major [rows, cols] matrices, in
// square tiles: a column walk over a tall matrix would miss the cache at every element, a tile's
// lines stay in L1 while it is read across.
template <bool Accumulate, class T>
void transpose_matrices(const T* src, int64_t count, int64_t rows, int64_t cols, T* dst) {
  constexpr int64_t kTile = 16;
  for (int64_t m = 0; m < count; ++m, src += rows * cols, dst += rows * cols) {
    for (int64_t i0 = 0; i0 < rows; i0 += kTile) {
      const int64_t i1 = std::min(i0 + kTile, rows);
      for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
        const int64_t j1 = std::min(j0 + kTile, cols);
        for (int64_t j = j0; j < j1; ++j) {
          for (int64_t i = i0; i < i1; ++i) {
            if constexpr (Accumulate) {
              dst[j * rows + i] += src[i * cols + j];
            } else {
              dst[j * rows + i] = src[i * cols + j];
            }
          }
        }
      }
    }
  }
}

// Writes the contiguous tensor of shape `dims` (row-major, rank up to kMaxRank) with dims p and q
// swapped, reading the contiguous `src` of shape `dims`. Runs along the last output dim are
// contiguous in src unless the last dim is one of the swapped ones; those are copied whole.
template <bool Accumulate, class T>
void swap_dims(const T* src, std::span<const int64_t> dims, int p, int q, T* dst) {
  const int rank = static_cast<int>(dims.size());
  if (p == q) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    copy_run<Accumulate>(src, dst, n);
    return;
  }
  if (std::min(p, q) == rank - 2 && std::max(p, q) == rank - 1) {  // a batch of matrices
    int64_t count = 1;
    for (int d = 0; d < rank - 2; ++d) count *= dims[static_cast<size_t>(d)];
    transpose_matrices<Accumulate>(src, count, dims[static_cast<size_t>(rank - 2)],
                                   dims[static_cast<size_t>(rank - 1)], dst);
    return;
  }
  const int pad = kMaxRank - rank;
  std::array<int64_t, kMaxRank> in;
  in.fill(1);
  for (int d = 0; d < rank; ++d) in[static_cast<size_t>(pad + d)] = dims[static_cast<size_t>(d)];
  Strides in_stride{};
  int64_t s = 1;
  for (int d = kMaxRank - 1; d >= 0; --d) {
    in_stride[static_cast<size_t>(d)] = s;
    s *= in[static_cast<size_t>(d)];
  }
  // Output dim d reads input dim d, with p and q exchanged.
  std::swap(in[static_cast<size_t>(pad + p)], in[static_cast<size_t>(pad + q)]);
  std::swap(in_stride[static_cast<size_t>(pad + p)], in_stride[static_cast<size_t>(pad + q)]);
  const std::array<int64_t, kMaxRank>& out = in;
  const Strides& rs = in_stride;
  const int64_t n = out[kMaxRank - 1], step = rs[kMaxRank - 1];
  for_each_strided_row<1>(out, {&rs}, [&](int64_t o, const std::array<int64_t, 1>& base) {
    const T* run = src + base[0];
    if (step == 1) {
      copy_run<Accumulate>(run, dst + o, n);
    } else if constexpr (Accumulate) {
      for (int64_t i = 0; i < n; ++i) dst[o + i] += run[i * step];
    } else {
      for (int64_t i = 0; i < n; ++i) dst[o + i] = run[i * step];
    }
  });
}

// For `outer` blocks: copies a run of `n` elements from src (blocks `src_step` apart) to dst
// (blocks `dst_step` apart). Select, narrow and cat are all this, with different steps.
template <bool Accumulate, class T>
void copy_blocks(const T* src, int64_t src_step, T* dst, int64_t dst_step, int64_t outer,
                 int64_t n) {
  for (int64_t i = 0; i < outer; ++i)
    copy_run<Accumulate>(src + i * src_step, dst + i * dst_step, n);
}

// Calls f(o, index) for every position of the row-major shape `dims` (any rank up to kMaxRank;
// a rank-0 shape has one position), o counting from 0 and `index` its multi-index.
template <class F>
void for_each_position(std::span<const int64_t> dims, F&& f) {
  const int rank = static_cast<int>(dims.size());
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::array<int64_t, kMaxRank> index{};
  for (int64_t o = 0; o < n; ++o) {
    f(o, static_cast<const std::array<int64_t, kMaxRank>&>(index));
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < dims[static_cast<size_t>(d)]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
}

// Writes (or adds into) the contiguous dst of shape `dims` from src read with `strides` (one per
// dim, in elements, negative for a reversed dim): dst[i₀, i₁, ..] = src[Σ iₖ·strides[k]].
// permute (strides permuted) and flip (strides negated, src at the last element) are this.
template <bool Accumulate, class T>
void strided_copy(const T* src, std::span<const int64_t> dims, std::span<const int64_t> strides,
                  T* dst) {
  const int rank = static_cast<int>(dims.size());
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  if (n == 0) return;
  if (rank == 0) {
    copy_run<Accumulate>(src, dst, 1);
    return;
  }
  const int64_t last = dims[static_cast<size_t>(rank - 1)];
  const int64_t step = strides[static_cast<size_t>(rank - 1)];
  std::array<int64_t, kMaxRank> index{};
  int64_t base = 0;
  for (int64_t o = 0; o < n; o += last) {
    const T* run = src + base;
    if (step == 1) {
      copy_run<Accumulate>(run, dst + o, last);
    } else if constexpr (Accumulate) {
      for (int64_t i = 0; i < last; ++i) dst[o + i] += run[i * step];
    } else {
      for (int64_t i = 0; i < last; ++i) dst[o + i] = run[i * step];
    }
    for (int d = rank - 2; d >= 0; --d) {
      const auto k = static_cast<size_t>(d);
      base += strides[k];
      if (++index[k] < dims[k]) break;
      base -= index[k] * strides[k];
      index[k] = 0;
    }
  }
}

// The number of elements before dim `dim` (outer) and after it (inner) in `shape`.
inline int64_t outer_size(const Shape& shape, int dim) {
  int64_t n = 1;
  for (int d = 0; d < dim; ++d) n *= shape[d];
  return n;
}
inline int64_t inner_size(const Shape& shape, int dim) {
  int64_t n = 1;
  for (int d = dim + 1; d < shape.rank(); ++d) n *= shape[d];
  return n;
}

// `dim` of x (negative counts from the end; a rank-0 x takes -1 and 0, like PyTorch) as
// 0..rank-1, or an Error naming the op, the tensor and its shape.
inline int checked_dim(const char* op, const char* role, const Tensor& x, int dim) {
  const int rank = x.rank();
  const int lo = rank == 0 ? -1 : -rank;
  const int hi = rank == 0 ? 0 : rank - 1;
  if (dim < lo || dim > hi) {
    throw Error(std::string(op) + ": " + describe(role, x) + ": dim " + std::to_string(dim) +
                " is out of range (expected " + std::to_string(lo) + ".." + std::to_string(hi) +
                ")");
  }
  return dim < 0 ? dim + (rank == 0 ? 1 : rank) : dim;
}

}  // namespace tapegrad::layout
