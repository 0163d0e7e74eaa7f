// Products with bfloat16 weights: the one-row kernel (weights widened in registers) and the
// many-row path (blocks of weights widened into a buffer for the float32 GEMM).
//
// Why widening and not AVX512_BF16's vdpbf16ps: the dot-product instruction takes both operands
// as bfloat16, so x would be rounded too, adding an error as large as the weights' own; widening
// keeps x float32 and the products exact, and needs no AVX512_BF16 (every CPU runs this code).
// It costs two integer operations per vector (a bfloat16 is the high half of a float32: a shift
// or a mask), which vdpbf16ps does not, but it reads the same half of float32's bytes, and a
// decode step is bound by those reads. tools/bench/gemv_bf16_bench.cpp times the kernels
// (docs/generation.md has the figures).
#include <tapegrad/kernels/gemm/linear_bf16.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/gemm/gemm.h>
#include <tapegrad/kernels/gemm/matmul_precision.h>
#include <tapegrad/kernels/scratch.h>
#include <tapegrad/kernels/vec.h>

namespace tapegrad {

namespace {

using detail::kLanes;
using detail::Vec;
using detail::vload;

constexpr int64_t L = kLanes<float>;  // floats per vector
constexpr int64_t P = 2 * L;          // bfloat16 weights per vector: one 64-byte line

typedef uint32_t Bits __attribute__((vector_size(64)));

inline float widen(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

// The P weights at p as two float vectors: lane j of `even` is p[2j], of `odd` p[2j + 1] (on a
// little-endian CPU, 32-bit lane j holds p[2j] in its low half and p[2j + 1] in its high half).
inline void widen_pairs(Vec<float>& even, Vec<float>& odd, const uint16_t* p) {
  Bits v;
  std::memcpy(&v, p, sizeof v);
  const Bits e = v << 16;
  const Bits o = v & 0xffff0000u;
  std::memcpy(&even, &e, sizeof even);
  std::memcpy(&odd, &o, sizeof odd);
}

// The sum of a vector's lanes, in a fixed order (the same bits wherever it runs).
inline float lane_sum(const Vec<float>& v) {
  float s = 0.0f;
  for (int64_t l = 0; l < L; ++l) s += v[l];
  return s;
}

// x reordered to match widen_pairs, per full block of P: its even elements, then its odd ones.
void split_pairs(const float* x, float* xs, int64_t full) {
  for (int64_t i = 0; i < full; i += P) {
    for (int64_t j = 0; j < L; ++j) {
      xs[i + j] = x[i + 2 * j];
      xs[i + L + j] = x[i + 2 * j + 1];
    }
  }
}

// R rows of W from row o: y[o + r] = W[o + r, :]·x. Each row's sum: the even and the odd lanes'
// accumulators over the full blocks, their lanes in order, then the tail in scalar. `ahead`
// (elements) is where the prefetch reads, relative to what is loaded: the next block of rows,
// or 0 where there is none.
template <int R>
inline void rows_dot(const uint16_t* w, const float* xs, const float* x, float* y, int64_t o,
                     int64_t in, int64_t full, int64_t ahead) {
  Vec<float> acc_even[R], acc_odd[R];
  for (int r = 0; r < R; ++r) acc_even[r] = acc_odd[r] = Vec<float>{};
  for (int64_t i = 0; i < full; i += P) {
    Vec<float> x_even, x_odd;
    vload(x_even, xs + i);
    vload(x_odd, xs + i + L);
    for (int r = 0; r < R; ++r) {
      const uint16_t* p = w + (o + r) * in + i;
      __builtin_prefetch(p + ahead);
      Vec<float> w_even, w_odd;
      widen_pairs(w_even, w_odd, p);
      acc_even[r] += w_even * x_even;
      acc_odd[r] += w_odd * x_odd;
    }
  }
  for (int r = 0; r < R; ++r) {
    float s = lane_sum(acc_even[r] + acc_odd[r]);
    const uint16_t* row = w + (o + r) * in;
    for (int64_t j = full; j < in; ++j) s += widen(row[j]) * x[j];
    y[o + r] = s;
  }
}

void gemv_rows(const uint16_t* w, const float* xs, const float* x, float* y, int64_t begin,
               int64_t end, int64_t in) {
  const int64_t full = in - in % P;
  int64_t o = begin;
  for (; o + 8 <= end; o += 8) rows_dot<8>(w, xs, x, y, o, in, full, o + 16 <= end ? 8 * in : 0);
  for (; o < end; ++o) rows_dot<1>(w, xs, x, y, o, in, full, 0);
}

// thread_scratch's tags: x in widen_pairs' order; a block of W's rows widened to float32.
struct SplitX;
struct WidenedRows;

}  // namespace

void round_to_bf16_bits(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    dst[i] = static_cast<uint16_t>(std::bit_cast<uint32_t>(detail::round_to_bf16(src[i])) >> 16);
  }
}

float bf16_bits_to_float(uint16_t bits) {
  return widen(bits);
}

void gemv_bf16(const uint16_t* w, const float* x, const float* bias, float* y, int64_t out,
               int64_t in) {
  // x in widen_pairs' order, once, in the caller's buffer; the parts only read it.
  const int64_t full = in - in % P;
  float* xs =
      detail::thread_scratch<SplitX, float>(static_cast<size_t>(std::max<int64_t>(full, 1)));
  split_pairs(x, xs, full);
  // As gemv: parts split at multiples of 8 rows, the cost counted in memory time (half the
  // bytes per weight of float32's).
  const int64_t blocks = (out + 7) / 8;
  parallel_for(blocks, 8.0 * 8.0 * static_cast<double>(in), [&](int, int64_t b0, int64_t b1) {
    const int64_t begin = b0 * 8;
    const int64_t end = b1 * 8 < out ? b1 * 8 : out;
    gemv_rows(w, xs, x, y, begin, end, in);
    if (bias != nullptr) {
      for (int64_t o = begin; o < end; ++o) y[o] += bias[o];
    }
  });
}

void linear_bf16(const uint16_t* w, const float* x, const float* bias, float* y, int64_t rows,
                 int64_t out, int64_t in) {
  // Blocks of 64 rows of W: a [64, in] float32 buffer per thread stays in L2, and for GPT-2's
  // in = 768 the products run on tapegrad's own small-product kernel (kernels/gemm/gemm.h).
  constexpr int64_t kBlock = 64;
  if (bias != nullptr) {
    for (int64_t r = 0; r < rows; ++r) std::memcpy(y + r * out, bias, sizeof(float) * out);
  }
  const int64_t blocks = (out + kBlock - 1) / kBlock;
  const double cost = 2.0 * static_cast<double>(rows) * kBlock * static_cast<double>(in);
  parallel_for(blocks, cost, [&](int, int64_t b0, int64_t b1) {
    float* wf = detail::thread_scratch<WidenedRows, float>(static_cast<size_t>(kBlock * in));
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t o0 = b * kBlock, n = std::min(kBlock, out - o0);
      for (int64_t i = 0; i < n * in; ++i) wf[i] = widen(w[o0 * in + i]);
      // Y[:, o0:o0 + n] (+)= X·W[o0:o0 + n, :]ᵀ, on top of the bias rows when there is a bias
      gemm(matrix(y + o0, rows, n, out), matrix(x, rows, in), matrix(wf, n, in).t(),
           {.accumulate = bias != nullptr, .parallel = false});
    }
  });
}

}  // namespace tapegrad
