// The small-product kernel's register blocks (kernels/gemm/gemm_small.cpp packs a transposed B
// and picks the variant), built once per instruction-set level from this one file: CMake
// compiles it with TAPEGRAD_ISA_LEVEL 0 (baseline), 1 (AVX2) or 2 (AVX-512) and that
// level's flags, and the level names the namespace and shapes the block for its register file.
// Blocks of R rows x NV vectors of C: per step of k, NV vectors of B's row and R broadcast
// elements of A feed R·NV multiply-adds into R·NV accumulators, which must stay in registers
// (AVX-512: 8 x 2 of 64 bytes, 16 of 32 ZMM; AVX2: 6 x 2 of 32 bytes, 12 of 16 YMM; baseline:
// 4 x 2 of 16 bytes, 8 of 16 XMM, leaving room for SSE's two-operand products; baseline on arm64:
// 6 x 4 of 16 bytes, 24 of 32 NEON registers). Each element of C is summed in k order from 0,
// its products fused into the sum where the level has FMA (not on x86's baseline; always on
// arm64), then multiplied by alpha: the same bits at every level with FMA, whatever the
// block shape. See gemm_small_isa.h for why nothing here may be inline or a template outside
// this file's namespace.
#include <cstdint>

#include <tapegrad/kernels/cpu/isa_level.h>
#include <tapegrad/kernels/gemm/gemm_small_isa.h>

#define TAPEGRAD_SMALL_GEMM_NAMESPACE TAPEGRAD_ISA_NAMESPACE(small_gemm)

namespace tapegrad::detail::TAPEGRAD_SMALL_GEMM_NAMESPACE {

namespace {

// kVectorsPerBlock: NV of the main blocks; the columns left over take a block of fewer.
#if TAPEGRAD_ISA_LEVEL == 2
constexpr int kVectorBytes = 64, kRowsPerBlock = 8, kVectorsPerBlock = 2;
#elif TAPEGRAD_ISA_LEVEL == 1
constexpr int kVectorBytes = 32, kRowsPerBlock = 6, kVectorsPerBlock = 2;
#elif defined(__aarch64__)
// NEON (32 registers of 16 bytes, FMA in every armv8-a CPU): 6 rows x 4 vectors, 24
// accumulators, 4 vectors of B and A's broadcast beside them. 4 vectors are 16 floats (8
// doubles), the multiple of n gemm_small.cpp sends, so every block is a full one.
constexpr int kVectorBytes = 16, kRowsPerBlock = 6, kVectorsPerBlock = 4;
#else
constexpr int kVectorBytes = 16, kRowsPerBlock = 4, kVectorsPerBlock = 2;
#endif

template <class T>
struct VecOf;
template <>
struct VecOf<float> {
  typedef float type __attribute__((vector_size(kVectorBytes)));
};
template <>
struct VecOf<double> {
  typedef double type __attribute__((vector_size(kVectorBytes)));
};
// Passed by reference only: by value, a vector's ABI depends on the target flags.
template <class T>
using Vec = typename VecOf<T>::type;
template <class T>
constexpr int64_t kLanes = kVectorBytes / sizeof(T);

template <class T>
inline void vload(Vec<T>& v, const T* p) {
  __builtin_memcpy(&v, p, sizeof v);
}
template <class T>
inline void vstore(T* p, const Vec<T>& v) {
  __builtin_memcpy(p, &v, sizeof v);
}

// C[i0.., j0..] (+)= alpha·A[i0.., :]·B[:, j0..] for R rows and NV vectors of columns.
// The loops over rows and vectors are unrolled (the pragmas) before GCC decides where acc lives:
// left to its later unrolling, it kept acc in memory, zeroed by memset and stored and reloaded
// around the k loop, at every level. The arguments are read once into locals, since a store
// through c might otherwise change them for all the compiler knows.
template <class T, int R, int NV>
void block(const SmallGemmArgs<T>& g, const T* a, const T* b, T* c) {
  constexpr int64_t L = kLanes<T>;
  const int64_t k = g.k, a_row = g.a_row, a_col = g.a_col, ldb = g.ldb, ldc = g.ldc;
  const T alpha = g.alpha;
  const bool accumulate = g.accumulate;
  Vec<T> acc[R][NV];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = Vec<T>{};
  }
  for (int64_t p = 0; p < k; ++p) {
    Vec<T> bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) vload(bv[v], b + p * ldb + v * L);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const T x = a[r * a_row + p * a_col];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] += x * bv[v];
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      Vec<T> out = acc[r][v] * alpha;
      T* dst = c + r * ldc + v * L;
      if (accumulate) {
        // acc·alpha rounded before C's value is added, as the reference loop does, in every
        // build: an empty asm keeps GCC from fusing the two (the sanitizer build's inlining did).
#if defined(__GNUC__) && defined(__x86_64__)
        asm("" : "+v"(out));
#elif defined(__GNUC__) && defined(__aarch64__)
        asm("" : "+w"(out));
#endif
        Vec<T> cur;
        vload(cur, dst);
        out = cur + out;
      }
      vstore(dst, out);
    }
  }
}

// The last m % kRowsPerBlock rows: one block whose row count is a template argument too, so its
// accumulators stay in registers.
template <class T, int NV, int R>
void rest_rows(int64_t rest, const SmallGemmArgs<T>& g, const T* a, const T* b, T* c) {
  if constexpr (R >= 1) {
    if (rest == R) {
      block<T, R, NV>(g, a, b, c);
    } else {
      rest_rows<T, NV, R - 1>(rest, g, a, b, c);
    }
  }
}

// The columns [j0, j0 + NV·L) of C, by blocks of rows.
template <class T, int NV>
void columns(const SmallGemmArgs<T>& g, int64_t j0) {
  const T* b = g.b + j0;
  T* c = g.c + j0;
  int64_t i0 = 0;
  for (; i0 + kRowsPerBlock <= g.m; i0 += kRowsPerBlock) {
    block<T, kRowsPerBlock, NV>(g, g.a + i0 * g.a_row, b, c + i0 * g.ldc);
  }
  rest_rows<T, NV, kRowsPerBlock - 1>(g.m - i0, g, g.a + i0 * g.a_row, b, c + i0 * g.ldc);
}

// The last (n / L) % kVectorsPerBlock vectors of columns: one block of that many.
template <class T, int NV>
void rest_columns(int64_t rest, const SmallGemmArgs<T>& g, int64_t j0) {
  if constexpr (NV >= 1) {
    if (rest == NV) {
      columns<T, NV>(g, j0);
    } else {
      rest_columns<T, NV - 1>(rest, g, j0);
    }
  }
}

template <class T>
void run_blocks(const SmallGemmArgs<T>& g) {
  constexpr int64_t L = kLanes<T>, W = kVectorsPerBlock * L;
  int64_t j0 = 0;
  for (; j0 + W <= g.n; j0 += W) columns<T, kVectorsPerBlock>(g, j0);
  rest_columns<T, kVectorsPerBlock - 1>((g.n - j0) / L, g, j0);  // n is a multiple of L
}

}  // namespace

void run(const SmallGemmArgs<float>& args) {
  run_blocks(args);
}
void run(const SmallGemmArgs<double>& args) {
  run_blocks(args);
}

}  // namespace tapegrad::detail::TAPEGRAD_SMALL_GEMM_NAMESPACE
