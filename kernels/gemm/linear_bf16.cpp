// Products with bfloat16 weights: the one-row kernel (weights widened in registers, the CPU
// level's variant in kernels/gemm/gemv_isa.cpp) and the many-row path (blocks of weights widened
// into a buffer for the float32 GEMM).
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
#include <tapegrad/kernels/gemm/gemv_isa.h>
#include <tapegrad/kernels/gemm/matmul_precision.h>
#include <tapegrad/kernels/scratch.h>

namespace tapegrad {

namespace {

constexpr int64_t P = detail::kGemvBf16Block;  // bfloat16 weights per block: one 64-byte line
constexpr int64_t L = P / 2;

inline float widen(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

// x reordered to match the kernel's widened weights (kernels/gemm/gemv_isa.cpp), per full block
// of P: its even elements, then its odd ones.
void split_pairs(const float* x, float* xs, int64_t full) {
  for (int64_t i = 0; i < full; i += P) {
    for (int64_t j = 0; j < L; ++j) {
      xs[i + j] = x[i + 2 * j];
      xs[i + L + j] = x[i + 2 * j + 1];
    }
  }
}

// thread_scratch's tags: x in the widened weights' order; a block of W's rows widened to float32.
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
  // x in the widened weights' order, once, in the caller's buffer; the parts only read it.
  const int64_t full = in - in % P;
  float* xs =
      detail::thread_scratch<SplitX, float>(static_cast<size_t>(std::max<int64_t>(full, 1)));
  split_pairs(x, xs, full);
  const auto rows = detail::gemv_kernels().rows_bf16;
  // As gemv: parts split at multiples of 8 rows, the cost counted in memory time (half the
  // bytes per weight of float32's).
  const int64_t blocks = (out + 7) / 8;
  parallel_for(blocks, 8.0 * 8.0 * static_cast<double>(in), [&](int, int64_t b0, int64_t b1) {
    const int64_t begin = b0 * 8;
    const int64_t end = b1 * 8 < out ? b1 * 8 : out;
    rows(w, xs, x, y, begin, end, in);
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
