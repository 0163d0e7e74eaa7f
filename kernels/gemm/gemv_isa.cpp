// The one-row matrix-vector kernel's loops (kernels/gemm/gemv.cpp splits the rows over threads and
// picks the variant), built once per instruction-set level from this one file: CMake compiles it
// with TAPEGRAD_ISA_LEVEL 0 (baseline), 1 (AVX2) or 2 (AVX-512) and that level's flags, and the
// level names the namespace. A few rows of W at a time against one x held in L1, each row summed
// in the same 16 lanes at every level (below), so its sums are the same everywhere; the levels
// with FMA fuse each product into its sum (madd). See kernels/cpu/isa_level.h for why nothing here
// may be inline or a template outside this file's namespace, and why it calls builtins rather than
// the standard library.
#include <cstdint>

#include <tapegrad/kernels/cpu/isa_level.h>
#include <tapegrad/kernels/gemm/gemv_isa.h>

#if TAPEGRAD_ISA_LEVEL >= 1
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

// The multiply-adds below are fused or not as madd says, never as the compiler would contract
// them (GCC fused some loops here and not others on arm64).
#pragma GCC optimize("fp-contract=off")

#define TAPEGRAD_GEMV_NAMESPACE TAPEGRAD_ISA_NAMESPACE(gemv)

namespace tapegrad::detail::TAPEGRAD_GEMV_NAMESPACE {

namespace {

// A row's sums are two running vectors of 16 lanes each (64 bytes) at every level, held as
// kParts registers of the level's width: lanes never mix, so the width changes which lanes are
// in flight, not any lane's order. kRows rows at a time, as many as the level's registers hold
// with the accumulators in them (a 64-byte vector wider than the registers would live in memory):
// AVX-512 8 rows x 2 ZMM (16 of 32), AVX2 3 rows x 4 YMM (12 of 16), SSE 1 row x 8 XMM (8 of 16),
// NEON 3 rows x 8 (24 of 32).
constexpr int kRegBytes = TAPEGRAD_ISA_REGISTER_BYTES;
#if TAPEGRAD_ISA_LEVEL == 2
constexpr int kRows = 8;
#elif TAPEGRAD_ISA_LEVEL == 1 || defined(__aarch64__)
constexpr int kRows = 3;
#else
constexpr int kRows = 1;
#endif
typedef float Reg __attribute__((vector_size(kRegBytes)));
constexpr int64_t kRegLanes = kRegBytes / 4, L = 16, kParts = L / kRegLanes;

// Passed by reference only: by value, a vector's ABI depends on the target flags.
void rload(Reg& v, const float* p) {
  __builtin_memcpy(&v, p, sizeof v);
}

// acc += a·b: one rounding where the level has FMA (every level but x86's baseline), else the
// product rounded first.
void madd(Reg& acc, const Reg& a, const Reg& b) {
#if TAPEGRAD_ISA_LEVEL == 2
  acc = _mm512_fmadd_ps(a, b, acc);
#elif TAPEGRAD_ISA_LEVEL == 1
  acc = _mm256_fmadd_ps(a, b, acc);
#elif defined(__aarch64__)
  acc = (Reg)vfmaq_f32((float32x4_t)acc, (float32x4_t)a, (float32x4_t)b);
#else
  acc += a * b;
#endif
}
float madd(float acc, float a, float b) {
#if TAPEGRAD_ISA_LEVEL >= 1 || defined(__aarch64__)
  return __builtin_fmaf(a, b, acc);
#else
  return acc + a * b;
#endif
}

// R rows of W starting at row o: y[o + r] = W[o + r, :]·x. Two accumulators of 16 lanes per row
// keep independent multiply-add chains in flight; their lanes are added in order, then the tail
// below one vector in scalar. `ahead` (elements) is where the software prefetch reads, relative
// to what is loaded: the next block of rows, so its lines are on their way while this block is
// summed (0 where there is none). The prefetch changes no arithmetic.
template <int R>
void rows_dot(const float* w, const float* x, float* y, int64_t o, int64_t in, int64_t ahead) {
  Reg acc0[R][kParts], acc1[R][kParts];
  for (int r = 0; r < R; ++r) {
    for (int q = 0; q < kParts; ++q) acc0[r][q] = acc1[r][q] = Reg{};
  }
  int64_t i = 0;
  for (; i + 2 * L <= in; i += 2 * L) {
    for (int r = 0; r < R; ++r) {
      const float* row = w + (o + r) * in + i;
      __builtin_prefetch(row + ahead);
      __builtin_prefetch(row + ahead + L);
      for (int q = 0; q < kParts; ++q) {
        Reg w0, w1, x0, x1;
        rload(w0, row + q * kRegLanes);
        rload(w1, row + L + q * kRegLanes);
        rload(x0, x + i + q * kRegLanes);
        rload(x1, x + i + L + q * kRegLanes);
        madd(acc0[r][q], w0, x0);
        madd(acc1[r][q], w1, x1);
      }
    }
  }
  for (; i + L <= in; i += L) {
    for (int r = 0; r < R; ++r) {
      for (int q = 0; q < kParts; ++q) {
        Reg w0, x0;
        rload(w0, w + (o + r) * in + i + q * kRegLanes);
        rload(x0, x + i + q * kRegLanes);
        madd(acc0[r][q], w0, x0);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    float s = 0.0f;  // the 16 lanes in order, each the sum of its two accumulators
    for (int q = 0; q < kParts; ++q) {
      const Reg lanes = acc0[r][q] + acc1[r][q];
      for (int64_t l = 0; l < kRegLanes; ++l) s += lanes[l];
    }
    const float* row = w + (o + r) * in;
    for (int64_t j = i; j < in; ++j) s = madd(s, row[j], x[j]);
    y[o + r] = s;
  }
}

// bfloat16 weights (kernels/gemm/linear_bf16.cpp): a block of P = 32 of them (64 bytes) widened
// into two 16-lane vectors, lane j of `even` the weight 2j and of `odd` 2j + 1 (a bfloat16 is the
// high half of a float32; on a little-endian CPU 32-bit lane j holds weight 2j in its low half and
// 2j + 1 in its high half). Part q of each: lanes [q·kRegLanes, (q + 1)·kRegLanes).
typedef uint32_t Bits __attribute__((vector_size(kRegBytes)));
constexpr int64_t P = kGemvBf16Block;
static_assert(P == 2 * L);

void widen_part(Reg& even, Reg& odd, const uint16_t* p, int q) {
  Bits v;
  __builtin_memcpy(&v, p + 2 * q * kRegLanes, sizeof v);
  const Bits e = v << 16;
  const Bits o = v & 0xffff0000u;
  __builtin_memcpy(&even, &e, sizeof even);
  __builtin_memcpy(&odd, &o, sizeof odd);
}

float widen(uint16_t bits) {
  return __builtin_bit_cast(float, static_cast<uint32_t>(bits) << 16);
}

// R rows of bfloat16 W from row o: y[o + r] = W[o + r, :]·x, with xs x in the widened lanes'
// order over the full blocks (their first `full` elements). Each row's sum: the even and the odd
// lanes' accumulators over the full blocks, their lanes in order, then the tail in scalar.
template <int R>
void rows_dot_bf16(const uint16_t* w, const float* xs, const float* x, float* y, int64_t o,
                   int64_t in, int64_t full, int64_t ahead) {
  Reg acc_even[R][kParts], acc_odd[R][kParts];
  for (int r = 0; r < R; ++r) {
    for (int q = 0; q < kParts; ++q) acc_even[r][q] = acc_odd[r][q] = Reg{};
  }
  for (int64_t i = 0; i < full; i += P) {
    for (int r = 0; r < R; ++r) {
      const uint16_t* p = w + (o + r) * in + i;
      __builtin_prefetch(p + ahead);
      for (int q = 0; q < kParts; ++q) {
        Reg w_even, w_odd, x_even, x_odd;
        widen_part(w_even, w_odd, p, q);
        rload(x_even, xs + i + q * kRegLanes);
        rload(x_odd, xs + i + L + q * kRegLanes);
        madd(acc_even[r][q], w_even, x_even);
        madd(acc_odd[r][q], w_odd, x_odd);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    float s = 0.0f;
    for (int q = 0; q < kParts; ++q) {
      const Reg lanes = acc_even[r][q] + acc_odd[r][q];
      for (int64_t l = 0; l < kRegLanes; ++l) s += lanes[l];
    }
    const uint16_t* row = w + (o + r) * in;
    for (int64_t j = full; j < in; ++j) s = madd(s, widen(row[j]), x[j]);
    y[o + r] = s;
  }
}

}  // namespace

void rows(const float* w, const float* x, float* y, int64_t begin, int64_t end, int64_t in) {
  int64_t o = begin;
  for (; o + kRows <= end; o += kRows) {
    rows_dot<kRows>(w, x, y, o, in, o + 2 * kRows <= end ? kRows * in : 0);
  }
  for (; o < end; ++o) rows_dot<1>(w, x, y, o, in, 0);
}

void rows_bf16(const uint16_t* w, const float* xs, const float* x, float* y, int64_t begin,
               int64_t end, int64_t in) {
  const int64_t full = in - in % P;
  int64_t o = begin;
  for (; o + kRows <= end; o += kRows) {
    rows_dot_bf16<kRows>(w, xs, x, y, o, in, full, o + 2 * kRows <= end ? kRows * in : 0);
  }
  for (; o < end; ++o) rows_dot_bf16<1>(w, xs, x, y, o, in, full, 0);
}

}  // namespace tapegrad::detail::TAPEGRAD_GEMV_NAMESPACE
