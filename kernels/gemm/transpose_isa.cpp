// The transpose kernel (kernels/gemm/transpose.h), built once per instruction-set level from this
// one file: CMake compiles it with TAPEGRAD_ISA_LEVEL 0 (baseline), 1 (AVX2) or 2 (AVX-512) and
// that level's flags, and the level names the namespace. Square blocks of one register's lanes
// (16 floats at AVX-512, 8 at AVX2, 4 at SSE and NEON; half as many doubles), loaded as rows,
// transposed in registers and stored as columns; the edges element by element. A transpose moves
// values and an added transpose adds each pair once, so every level gives the same bits. See
// kernels/cpu/isa_level.h for why nothing here may be inline or a template outside this file's
// namespace, and why it calls builtins rather than the standard library.
#include <cstdint>

#include <tapegrad/kernels/cpu/isa_level.h>
#include <tapegrad/kernels/gemm/transpose_isa.h>

#define TAPEGRAD_TRANSPOSE_NAMESPACE TAPEGRAD_ISA_NAMESPACE(transpose)

namespace tapegrad::detail::TAPEGRAD_TRANSPOSE_NAMESPACE {

namespace {

constexpr int kRegBytes = TAPEGRAD_ISA_REGISTER_BYTES;

template <class T>
struct RegOf {
  typedef T type __attribute__((vector_size(kRegBytes)));
};
// Passed by reference only: by value, a vector's ABI depends on the target flags.
template <class T>
using Reg = typename RegOf<T>::type;
template <class T>
constexpr int kW = kRegBytes / static_cast<int>(sizeof(T));

// 0, 1, ..., N − 1 as a pack (std::make_integer_sequence without <utility>).
template <class T, T... I>
struct Seq {};
#if defined(__clang__)
template <int N>
using Iota = __make_integer_seq<Seq, int, N>;
#else
template <int N>
using Iota = Seq<int, __integer_pack(N)...>;
#endif

// Swaps the off-diagonal H x H sub-blocks of a and b (rows i and i + H of a 2H x 2H block).
template <class T, int H, int... I>
void swap_blocks(Reg<T>& a, Reg<T>& b, Seq<int, I...>) {
  constexpr int W = kW<T>;
  const Reg<T> na = __builtin_shufflevector(a, b, ((I & H) ? W + I - H : I)...);
  const Reg<T> nb = __builtin_shufflevector(a, b, ((I & H) ? W + I : I + H)...);
  a = na;
  b = nb;
}

// Transposes the W x W block held in r (r[i] = row i): the sub-blocks of H = W/2 .. 1 swapped.
template <class T, int H = kW<T> / 2>
void transpose_block(Reg<T> (&r)[kW<T>]) {
  for (int i = 0; i < kW<T>; ++i) {
    if ((i & H) == 0) swap_blocks<T, H>(r[i], r[i + H], Iota<kW<T>>());
  }
  if constexpr (H > 1) transpose_block<T, H / 2>(r);
}

template <class T, bool Add>
void transpose_loop(const T* src, int64_t src_ld, int64_t rows, int64_t cols, T* dst,
                    int64_t dst_ld) {
  constexpr int64_t W = kW<T>;
  const int64_t r_blocks = rows / W * W, c_blocks = cols / W * W;
  for (int64_t r0 = 0; r0 < r_blocks; r0 += W) {
    for (int64_t c0 = 0; c0 < c_blocks; c0 += W) {
      Reg<T> v[W];
      for (int64_t i = 0; i < W; ++i)
        __builtin_memcpy(&v[i], src + (r0 + i) * src_ld + c0, kRegBytes);
      transpose_block<T>(v);
      for (int64_t i = 0; i < W; ++i) {
        T* out = dst + (c0 + i) * dst_ld + r0;
        if constexpr (Add) {
          Reg<T> x;
          __builtin_memcpy(&x, out, kRegBytes);
          v[i] = x + v[i];
        }
        __builtin_memcpy(out, &v[i], kRegBytes);
      }
    }
  }
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t r = c < c_blocks ? r_blocks : 0; r < rows; ++r) {
      T& out = dst[c * dst_ld + r];
      out = Add ? out + src[r * src_ld + c] : src[r * src_ld + c];
    }
  }
}

template <class T>
void transpose_any(const T* src, int64_t src_ld, int64_t rows, int64_t cols, T* dst, int64_t dst_ld,
                   bool add) {
  if (add) {
    transpose_loop<T, true>(src, src_ld, rows, cols, dst, dst_ld);
  } else {
    transpose_loop<T, false>(src, src_ld, rows, cols, dst, dst_ld);
  }
}

}  // namespace

void transpose(const float* src, int64_t src_ld, int64_t rows, int64_t cols, float* dst,
               int64_t dst_ld, bool add) {
  transpose_any(src, src_ld, rows, cols, dst, dst_ld, add);
}
void transpose(const double* src, int64_t src_ld, int64_t rows, int64_t cols, double* dst,
               int64_t dst_ld, bool add) {
  transpose_any(src, src_ld, rows, cols, dst, dst_ld, add);
}

}  // namespace tapegrad::detail::TAPEGRAD_TRANSPOSE_NAMESPACE
