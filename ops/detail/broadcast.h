// Broadcasting with PyTorch's rules: the output shape, index walks, and the elementwise kernels
// (forward, and the reduction of gradients over broadcast dims) every binary op shares.
#pragma once

#include <array>
#include <cstdint>

#include <tapegrad/graph/arena.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/strided_loop.h>

namespace tapegrad {

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
  const int64_t a_step = a_strides[kMaxRank - 1], b_step = b_strides[kMaxRank - 1];
  const std::array<int64_t, kMaxRank> dims = padded_dims(out);
  const int64_t n = dims[kMaxRank - 1];
  for_each_strided_row<2>(dims, {&a_strides, &b_strides},
                          [&](int64_t o, const std::array<int64_t, 2>& base) {
                            for (int64_t i = 0; i < n; ++i) {
                              f(o + i, base[0] + i * a_step, base[1] + i * b_step);
                            }
                          });
}

// How an operand broadcast to `out` is read at out's row-major index o. The first four kinds
// are the cases elementwise ops meet in practice and get contiguous Eigen loops; the rest walk.
enum class BroadcastKind : uint8_t {
  Same,     // x[o]: as many elements as out (same shape up to size-1 dims)
  Scalar,   // x[0]: one element
  Row,      // x[o % inner]: out's trailing dims, e.g. a bias [C] against [B, T, C]
  Column,   // x[o / inner]: out's leading dims then ones, e.g. [B, T, 1] against [B, T, C]
  General,  // anything else, e.g. [2, 1] against [2, 3, 4]
};
struct BroadcastOperand {
  BroadcastKind kind;
  int64_t inner;  // Row: x's element count; Column: the number of outputs per x element
};
// `x` must broadcast to `out` (out == broadcast_shape(x, something)) and out must be non-empty.
BroadcastOperand classify_broadcast(const Shape& x, const Shape& out);

namespace detail {
template <bool Accumulate, class Dst, class Expr>
void store(Dst&& dst, const Expr& value) {
  if constexpr (Accumulate) {
    dst += value;
  } else {
    dst = value;
  }
}
}  // namespace detail

// y = f(a, b) elementwise over `out` (y += f(a, b) when Accumulate), a and b broadcast to out; y
// holds out.numel() elements and overlaps neither input. f is called with Eigen arrays and/or
// scalars on the fast paths and with two scalars on the walk, so write it generically, e.g.
// `[](const auto& x, const auto& z) { return x * z; }`.
template <bool Accumulate, class T, class F>
void broadcast_apply(T* y, const Shape& out, const T* a, const Shape& a_shape, const T* b,
                     const Shape& b_shape, F f) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const BroadcastOperand ka = classify_broadcast(a_shape, out);
  const BroadcastOperand kb = classify_broadcast(b_shape, out);
  using K = BroadcastKind;
  if (ka.kind == K::Same && kb.kind == K::Same) {
    detail::store<Accumulate>(ArrayMap<T>(y, n), f(ConstArrayMap<T>(a, n), ConstArrayMap<T>(b, n)));
  } else if (ka.kind == K::Same && kb.kind == K::Scalar) {
    detail::store<Accumulate>(ArrayMap<T>(y, n), f(ConstArrayMap<T>(a, n), b[0]));
  } else if (ka.kind == K::Scalar && kb.kind == K::Same) {
    detail::store<Accumulate>(ArrayMap<T>(y, n), f(a[0], ConstArrayMap<T>(b, n)));
  } else if (ka.kind == K::Same && kb.kind == K::Row) {
    const int64_t w = kb.inner;
    for (int64_t r = 0; r < n / w; ++r) {
      detail::store<Accumulate>(ArrayMap<T>(y + r * w, w),
                                f(ConstArrayMap<T>(a + r * w, w), ConstArrayMap<T>(b, w)));
    }
  } else if (ka.kind == K::Row && kb.kind == K::Same) {
    const int64_t w = ka.inner;
    for (int64_t r = 0; r < n / w; ++r) {
      detail::store<Accumulate>(ArrayMap<T>(y + r * w, w),
                                f(ConstArrayMap<T>(a, w), ConstArrayMap<T>(b + r * w, w)));
    }
  } else if (ka.kind == K::Same && kb.kind == K::Column) {
    const int64_t w = kb.inner;
    for (int64_t r = 0; r < n / w; ++r) {
      detail::store<Accumulate>(ArrayMap<T>(y + r * w, w), f(ConstArrayMap<T>(a + r * w, w), b[r]));
    }
  } else if (ka.kind == K::Column && kb.kind == K::Same) {
    const int64_t w = ka.inner;
    for (int64_t r = 0; r < n / w; ++r) {
      detail::store<Accumulate>(ArrayMap<T>(y + r * w, w), f(a[r], ConstArrayMap<T>(b + r * w, w)));
    }
  } else {
    for_each_broadcast(out, broadcast_strides(a_shape, out), broadcast_strides(b_shape, out),
                       [&](int64_t o, int64_t ia, int64_t ib) {
                         detail::store<Accumulate>(y[o], f(a[ia], b[ib]));
                       });
  }
}

// dst += reduce(src), or dst -= reduce(src) when `subtract`: src covers `out`, dst_shape
// broadcasts to out, and reduce sums src over the dims dst was broadcast along (torch's
// sum_to_size). The one place broadcast gradients are reduced.
template <class T>
void reduce_broadcast(const T* src, const Shape& out, T* dst, const Shape& dst_shape,
                      bool subtract = false);
extern template void reduce_broadcast<float>(const float*, const Shape&, float*, const Shape&,
                                             bool);
extern template void reduce_broadcast<double>(const double*, const Shape&, double*, const Shape&,
                                              bool);

// dx += reduce(f(p, q)): the gradient term f(p, q) covers `out` (p covers out, q broadcasts to
// it) and is reduced to x's shape. Without reduction the term is accumulated directly;
// otherwise it is formed in scratch from `arena` first, as torch forms it before summing.
template <class T, class F>
void accumulate_reduced(Arena& arena, T* dx, const Shape& x_shape, const Shape& out, const T* p,
                        const T* q, const Shape& q_shape, F f) {
  if (x_shape.numel() == out.numel()) {
    broadcast_apply<true>(dx, out, p, out, q, q_shape, f);
    return;
  }
  T* term = arena.allocate_array<T>(out.numel());
  broadcast_apply<false>(term, out, p, out, q, q_shape, f);
  reduce_broadcast(term, out, dx, x_shape);
}

}  // namespace tapegrad
