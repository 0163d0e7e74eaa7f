// 64-byte vectors of float or double (GCC/Clang vector extensions) for the hand-blocked kernels:
// the small-product kernel (gemm_small.cpp), the fused attention's direct kernel and the softmax
// rows; the reduction of a vector's lanes; the transpose of one square block of them; and the
// walk over row blocks both kernels take. One
// AVX-512 register, two AVX2 ones or four SSE ones, as the build targets; the compiler maps the
// arithmetic. On arm64 too (four NEON registers): the same lanes, so the same summation order and
// bits as on x86; the NEON-shaped blocks are the kernels built per level (gemm_small_isa.cpp).
// Internal to ops/.
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>

namespace tapegrad::detail {

template <class T>
struct VecOf;
template <>
struct VecOf<float> {
  typedef float type __attribute__((vector_size(64)));
  typedef int32_t lanes __attribute__((vector_size(64)));
  static constexpr lanes kIota = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
};
template <>
struct VecOf<double> {
  typedef double type __attribute__((vector_size(64)));
  typedef int64_t lanes __attribute__((vector_size(64)));
  static constexpr lanes kIota = {0, 1, 2, 3, 4, 5, 6, 7};
};
// Passed by reference only: by value, a 64-byte vector's ABI depends on the target flags.
template <class T>
using Vec = typename VecOf<T>::type;
template <class T>
constexpr int64_t kLanes = 64 / sizeof(T);

template <class T>
inline void vload(Vec<T>& v, const T* p) {
  std::memcpy(&v, p, sizeof v);
}
template <class T>
inline void vstore(T* p, const Vec<T>& v) {
  std::memcpy(p, &v, sizeof v);
}

// op(v, v with its lanes swapped pairwise at each distance), halving down to one lane. (In
// place, by reference: see Vec.)
template <class T, class Op>
inline T reduce_lanes(const Vec<T>& in, Op op) {
  Vec<T> v = in;
  if constexpr (kLanes<T> == 16) {
    Vec<T> s = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    op(v, s);
    s = __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11);
    op(v, s);
    s = __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
    op(v, s);
    s = __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
    op(v, s);
  } else {
    Vec<T> s = __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3);
    op(v, s);
    s = __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5);
    op(v, s);
    s = __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6);
    op(v, s);
  }
  return v[0];
}
// Transposes the L x L block held in r (r[i] = row i), by swapping off-diagonal sub-blocks of
// H x H within each 2H x 2H block, for H = L/2 .. 1: one two-register shuffle per row and stage.
template <class T, int64_t H, size_t... I>
inline void swap_blocks(Vec<T>& a, Vec<T>& b, std::index_sequence<I...>) {
  constexpr int64_t L = kLanes<T>;
  const Vec<T> na = __builtin_shufflevector(a, b, ((I & H) ? L + I - H : I)...);
  const Vec<T> nb = __builtin_shufflevector(a, b, ((I & H) ? L + I : I + H)...);
  a = na;
  b = nb;
}
template <class T, int64_t H = kLanes<T> / 2>
inline void transpose_block(Vec<T> (&r)[kLanes<T>]) {
  for (int64_t i = 0; i < kLanes<T>; ++i) {
    if ((i & H) == 0) swap_blocks<T, H>(r[i], r[i + H], std::make_index_sequence<kLanes<T>>());
  }
  if constexpr (H > 1) transpose_block<T, H / 2>(r);
}

// f.operator()<R>(i0) for the blocks of R rows covering [0, t): the full ones, then one block of
// the rest (its row count a template argument too, so its accumulators stay in registers).
template <int R, class F>
void rest_rows(int64_t rest, int64_t i0, F& f) {
  if constexpr (R >= 1) {
    if (rest == R) {
      f.template operator()<R>(i0);
    } else {
      rest_rows<R - 1>(rest, i0, f);
    }
  }
}
template <int R, class F>
void row_blocks(int64_t t, F&& f) {
  int64_t i0 = 0;
  for (; i0 + R <= t; i0 += R) f.template operator()<R>(i0);
  rest_rows<R - 1>(t - i0, i0, f);
}

}  // namespace tapegrad::detail
