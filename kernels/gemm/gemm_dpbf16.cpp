// tapegrad's own bf16 product on AVX512_BF16 (kernels/gemm/gemm_bf16.cpp picks it by shape): C (+)=
// alpha·bf16(A)·bf16(B) on the calling thread, sums in float32. The operands are rounded to
// bfloat16 (to nearest, ties to even, NaN made 0x7fc0, as torch) while they are packed, straight
// into the layout vdpbf16ps multiplies: one 32-bit word holds a pair (x[2p], x[2p+1]) of
// consecutive k, and one instruction adds both products of 16 word pairs to 16 float32 sums. So
// no rounded copy of a whole operand is made: the packed blocks are all the memory it uses.
// Blocked as GotoBLAS: a [kKC, kNC] block of B in panels of kNR columns, a [kMC, kKC] block of A
// in panels of kMR rows, and each kMR×kNR tile of C summed in 24 registers over the block's k.
// An element of C is summed in the same order however C is split over threads, so the bits are
// the same at any thread count. The instruction treats subnormal bf16 operands and sums as zero
// (as oneDNN's kernels on it do). Compiled for AVX512_BF16 by target attributes, so the file
// builds for any x86-64 CPU; call it only where bf16_supported().
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstdint>

#include <tapegrad/graph/error.h>
#include <tapegrad/kernels/gemm/gemm_kernels.h>
#include <tapegrad/kernels/scratch.h>

#if defined(__x86_64__) || defined(__i386__)
#define TAPEGRAD_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512bf16")))

namespace tapegrad::detail {

namespace {

constexpr int kMR = 8;             // rows of a C tile
constexpr int kNR = kDpbf16Panel;  // columns of a C tile: three vectors of 16 floats
constexpr int64_t kKC = 768;       // k of a packed block (kKC / 2 pairs): GPT-2's width in one
constexpr int64_t kMC = 256;       // rows of A in a packed block (in L2 with a B panel)
constexpr int64_t kNC = 3072;      // columns of B in a packed block

// pack_rows fetches the rows this many pairs ahead: a product's operands usually come from
// memory, and rows of a few KiB each are too short for the hardware's prefetchers to ramp up.
constexpr int64_t kPrefetchPairs = 8;

// thread_scratch's tags: the packed blocks of A and B.
struct PackedA;
struct PackedB;

TAPEGRAD_BF16_TARGET inline __mmask16 first_lanes(int64_t n) {
  return n >= 16 ? __mmask16(0xffff) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
}

// The bits of x rounded to bfloat16 in each word's upper half, its lower half zero: torch's
// round to nearest even (c10::detail::round_to_nearest_even), NaN made 0x7fc0.
TAPEGRAD_BF16_TARGET inline __m512i rounded_high(__m512 x) {
  const __m512i u = _mm512_castps_si512(x);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i r =
      _mm512_and_si512(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))),
                       _mm512_set1_epi32(static_cast<int>(0xffff0000u)));
  return _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q),
                               _mm512_set1_epi32(0x7fc00000));
}

// 16 words (even[l], odd[l]).
TAPEGRAD_BF16_TARGET inline __m512i pairs_of(__m512 even, __m512 odd) {
  return _mm512_or_si512(_mm512_srli_epi32(rounded_high(even), 16), rounded_high(odd));
}

// 16 words (x[2l], x[2l+1]) of 32 consecutive floats, x[0, 16) in lo and x[16, 32) in hi: the
// upper halves of the 32 rounded words, in order.
TAPEGRAD_BF16_TARGET inline __m512i consecutive_pairs(__m512 lo, __m512 hi) {
  alignas(64) static constexpr uint16_t kUpperHalves[32] = {
      1,  3,  5,  7,  9,  11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31,
      33, 35, 37, 39, 41, 43, 45, 47, 49, 51, 53, 55, 57, 59, 61, 63};
  return _mm512_permutex2var_epi16(rounded_high(lo), _mm512_load_si512(kUpperHalves),
                                   rounded_high(hi));
}

// r[i][j] becomes r[j][i], for 16 vectors of 16 words.
TAPEGRAD_BF16_TARGET inline void transpose16(__m512i r[16]) {
  __m512i t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
  }
  // u[4g + c]'s 128-bit lane L: rows 4g..4g+3 of column 4L + c.
  __m512i u[16];
  for (int i = 0; i < 16; i += 4) {
    u[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
    u[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
    u[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
    u[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  // Then a 4×4 transpose of lanes for each c.
  for (int c = 0; c < 4; ++c) {
    const __m512i v0 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x88);
    const __m512i v1 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xdd);
    const __m512i v2 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x88);
    const __m512i v3 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xdd);
    r[c] = _mm512_shuffle_i32x4(v0, v2, 0x88);
    r[4 + c] = _mm512_shuffle_i32x4(v1, v3, 0x88);
    r[8 + c] = _mm512_shuffle_i32x4(v0, v2, 0xdd);
    r[12 + c] = _mm512_shuffle_i32x4(v1, v3, 0xdd);
  }
}

// A block of n positions (rows of A, or columns of B) over kc values of k, packed in panels of W
// positions: panel P holds out[P·kp·W + p·W + w] = (x(2p, P·W + w), x(2p + 1, P·W + w)) for the
// kp = ⌈kc/2⌉ pairs; positions from n on (to the next multiple of 16), and the odd k's missing
// partner, are zeros. Two layouts of x in memory:
// - pack_rows: x(q, w) = src[q·ld + w] (positions consecutive): pairs from two stored rows, read
//   across the whole block so the rows stream;
// - pack_cols: x(q, w) = src[w·ld + q] (k consecutive): pairs within a stored row, 16 rows at a
//   time turned by a 16×16 transpose.
template <int W>
TAPEGRAD_BF16_TARGET inline void store_words(uint32_t* out, int64_t kp, int64_t p, int64_t w,
                                             __m512i words) {
  if constexpr (W % 16 == 0) {
    _mm512_storeu_si512(out + w / W * kp * W + p * W + w % W, words);
  } else {
    static_assert(W == 8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + w / W * kp * W + p * W),
                        _mm512_castsi512_si256(words));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (w / W + 1) * kp * W + p * W),
                        _mm512_extracti64x4_epi64(words, 1));
  }
}

template <int W>
TAPEGRAD_BF16_TARGET __attribute__((noinline)) void pack_rows(const float* src, int64_t ld,
                                                              int64_t kc, int64_t n,
                                                              uint32_t* out) {
  const int64_t kp = (kc + 1) / 2;
  for (int64_t p = 0; p < kp; ++p) {
    const float* even = src + 2 * p * ld;
    const bool odd = 2 * p + 1 < kc;
    const int64_t ahead = 2 * std::min<int64_t>(kPrefetchPairs, kp - 1 - p) * ld;
    for (int64_t w = 0; w < n; w += 16) {
      _mm_prefetch(reinterpret_cast<const char*>(even + ahead + w), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(even + ahead + ld + w), _MM_HINT_T0);
      const __mmask16 valid = first_lanes(n - w);
      const __m512 e = _mm512_maskz_loadu_ps(valid, even + w);
      const __m512 o = odd ? _mm512_maskz_loadu_ps(valid, even + ld + w) : _mm512_setzero_ps();
      store_words<W>(out, kp, p, w, pairs_of(e, o));
    }
  }
}

template <int W>
TAPEGRAD_BF16_TARGET __attribute__((noinline)) void pack_cols(const float* src, int64_t ld,
                                                              int64_t kc, int64_t n,
                                                              uint32_t* out) {
  const int64_t kp = (kc + 1) / 2;
  for (int64_t w = 0; w < n; w += 16) {
    for (int64_t p = 0; p < kp; p += 16) {
      const __mmask16 lo = first_lanes(kc - 2 * p), hi = first_lanes(kc - 2 * p - 16);
      __m512i r[16];
      for (int l = 0; l < 16; ++l) {
        if (w + l < n) {
          const float* x = src + (w + l) * ld + 2 * p;
          _mm_prefetch(reinterpret_cast<const char*>(x + 128), _MM_HINT_T0);
          r[l] = consecutive_pairs(_mm512_maskz_loadu_ps(lo, x), _mm512_maskz_loadu_ps(hi, x + 16));
        } else {
          r[l] = _mm512_setzero_si512();
        }
      }
      transpose16(r);
      const int64_t pairs = std::min<int64_t>(16, kp - p);
      for (int i = 0; i < pairs; ++i) store_words<W>(out, kp, p + i, w, r[i]);
    }
  }
}

// The [rows, cols] corner of C (+)= alpha·Σ_p a-pairs·b-pairs over kp pairs, for cols ≤ 16·V: a
// a kMR-row panel, b a kNR-column panel of which the first V vectors are read (a narrow last
// panel computes no zero columns); `add` adds to C instead of overwriting it.
template <int V>
TAPEGRAD_BF16_TARGET __attribute__((noinline)) void tile(int64_t kp, const uint32_t* a,
                                                         const uint32_t* b, float* c, int64_t ldc,
                                                         int rows, int cols, float alpha,
                                                         bool add) {
  __m512 acc[kMR][V];
#pragma GCC unroll 8
  for (int i = 0; i < kMR; ++i) {
#pragma GCC unroll 3
    for (int v = 0; v < V; ++v) acc[i][v] = _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < kp; ++p, a += kMR, b += kNR) {
    __m512bh bv[V];
#pragma GCC unroll 3
    for (int v = 0; v < V; ++v) bv[v] = (__m512bh)_mm512_load_si512(b + 16 * v);
#pragma GCC unroll 8
    for (int i = 0; i < kMR; ++i) {
      const auto ai = (__m512bh)_mm512_set1_epi32(static_cast<int>(a[i]));
#pragma GCC unroll 3
      for (int v = 0; v < V; ++v) acc[i][v] = _mm512_dpbf16_ps(acc[i][v], ai, bv[v]);
    }
  }
  __mmask16 mask[V];
#pragma GCC unroll 3
  for (int v = 0; v < V; ++v) mask[v] = first_lanes(cols - 16 * v);
  const __m512 scale = _mm512_set1_ps(alpha);
#pragma GCC unroll 8
  for (int i = 0; i < kMR; ++i) {
    if (i >= rows) break;
    float* ci = c + i * ldc;
#pragma GCC unroll 3
    for (int v = 0; v < V; ++v) {
      __m512 x = alpha == 1.0f ? acc[i][v] : _mm512_mul_ps(acc[i][v], scale);
      if (add) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(mask[v], ci + 16 * v));
      _mm512_mask_storeu_ps(ci + 16 * v, mask[v], x);
    }
  }
}

// Part `part` of `parts` of the cache lines of rows × cols floats (rows ld apart), fetched
// into L2.
inline void prefetch_part(const float* data, int64_t ld, int64_t rows, int64_t cols, int64_t part,
                          int64_t parts) {
  const int64_t per_row = (cols * 4 + 63) / 64, lines = rows * per_row;
  for (int64_t l = lines * part / parts; l < lines * (part + 1) / parts; ++l) {
    _mm_prefetch(reinterpret_cast<const char*>(data + l / per_row * ld) + l % per_row * 64,
                 _MM_HINT_T1);
  }
}

int64_t round_up(int64_t x, int64_t to) {
  return (x + to - 1) / to * to;
}

}  // namespace

void dpbf16_gemm(MatrixView<float> c, MatrixView<const float> a, MatrixView<const float> b,
                 float alpha, bool accumulate) {
  const int64_t m = c.rows, n = c.cols, k = a.cols;
  uint32_t* packed_b = thread_scratch<PackedB, uint32_t>(
      static_cast<size_t>(round_up(std::min(n, kNC), kNR) * kKC / 2));
  uint32_t* packed_a = thread_scratch<PackedA, uint32_t>(
      static_cast<size_t>(round_up(std::min(m, kMC), 16) * kKC / 2));
  for (int64_t jc = 0; jc < n; jc += kNC) {
    const int64_t nc = std::min(kNC, n - jc);
    for (int64_t pc = 0; pc < k; pc += kKC) {
      const int64_t kc = std::min(kKC, k - pc), kp = (kc + 1) / 2;
      // A B stored by rows of k streams in whole rows, packed at once; a transposed B is packed
      // a panel at a time as the first block of A reaches it, while the next panel's memory is
      // fetched behind the tiles' arithmetic.
      if (!b.transposed) pack_rows<kNR>(b.data + pc * b.ld + jc, b.ld, kc, nc, packed_b);
      for (int64_t ic = 0; ic < m; ic += kMC) {
        const int64_t mc = std::min(kMC, m - ic);
        if (a.transposed) {  // A(i, q) = data[q·ld + i]
          pack_rows<kMR>(a.data + pc * a.ld + ic, a.ld, kc, mc, packed_a);
        } else {
          pack_cols<kMR>(a.data + ic * a.ld + pc, a.ld, kc, mc, packed_a);
        }
        const bool add = accumulate || pc > 0;
        const int64_t tiles = (mc + kMR - 1) / kMR;
        for (int64_t j = 0; j < nc; j += kNR) {
          const int64_t panel_cols = std::min<int64_t>(kNR, nc - j);
          const bool pack = ic == 0 && b.transposed;  // B(q, j) = data[j·ld + q]
          if (pack) {
            pack_cols<kNR>(b.data + (jc + j) * b.ld + pc, b.ld, kc, panel_cols,
                           packed_b + j / kNR * kp * kNR);
          }
          const int64_t next_cols = pack ? std::min<int64_t>(kNR, nc - j - kNR) : 0;
          for (int64_t t = 0; t < tiles; ++t) {
            const int64_t i = t * kMR;
            if (next_cols > 0) {
              prefetch_part(b.data + (jc + j + kNR) * b.ld + pc, b.ld, next_cols, kc, t, tiles);
            }
            const auto run = panel_cols > 32 ? tile<3> : panel_cols > 16 ? tile<2> : tile<1>;
            run(kp, packed_a + t * kp * kMR, packed_b + j / kNR * kp * kNR,
                c.data + (ic + i) * c.ld + jc + j, c.ld,
                static_cast<int>(std::min<int64_t>(kMR, mc - i)), static_cast<int>(panel_cols),
                alpha, add);
          }
        }
      }
    }
  }
}

}  // namespace tapegrad::detail

#else  // not x86: no AVX512_BF16, so bf16_supported() is false and nothing calls the kernel

namespace tapegrad::detail {

void dpbf16_gemm(MatrixView<float>, MatrixView<const float>, MatrixView<const float>, float, bool) {
  throw Error("dpbf16_gemm: AVX512_BF16 kernel called on a CPU that is not x86-64");
}

}  // namespace tapegrad::detail

#endif
