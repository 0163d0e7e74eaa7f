// gemm's float32 products at MatmulPrecision::BFloat16 (kernels/gemm/matmul_precision.h): the
// precision setting, the CPU check, and the choice of engine by shape:
// - tapegrad's own AVX512_BF16 kernel (gemm_dpbf16.cpp), which rounds the operands as it packs
//   them: every product with m, n > 1 but those below;
// - oneDNN's bf16 matmul (f32 output), when linked, for products of at least
//   kDnnlMinMultiplyAdds multiply-adds where a tenth or more of the own kernel's 48-column
//   panels would be padding (n of 64 or 256, as gpt-tiny's): oneDNN measured faster there
//   (tools/bench/bf16_bench.cpp). It takes operands already rounded to bfloat16, copied into
//   per-thread buffers;
// - matrix-vector products (m or n of 1): the rounded operands, stored as float32 (a bfloat16
//   value is exactly a float32 with its low 16 bits zero), through the float32 kernel. A product
//   of two bfloat16 values is exact in float32, so this is the same arithmetic (bf16 operands,
//   float32 sums), in the float32 kernel's order.
// The per-thread buffers only grow: no allocation per product once the shapes have been seen.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <string>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/gemm/gemm_kernels.h>
#include <tapegrad/kernels/gemm/matmul_precision.h>
#include <tapegrad/kernels/scratch.h>

namespace tapegrad {

namespace {

std::atomic<int> precision{static_cast<int>(MatmulPrecision::Highest)};
std::atomic<bool> pretend_no_bf16{false};
std::atomic<bool> noticed{false};
std::atomic<int> engine{static_cast<int>(detail::Bf16Engine::Auto)};

// oneDNN's share (see the top): products of at least this many multiply-adds (m·n·k) whose C
// would be a tenth or more padding in the own kernel's panels of kPanel columns.
constexpr double kDnnlMinMultiplyAdds = 1 << 20;
constexpr int64_t kPanel = detail::kDpbf16Panel;

bool cpu_has_avx512_bf16() {
  return cpu_detected_capability() >= CpuCapability::Avx512Bf16;
}

// The bits of x rounded to bfloat16, to nearest, ties to even, as torch's
// c10::detail::round_to_nearest_even: NaN becomes the quiet NaN 0x7fc0.
inline uint16_t bf16_bits(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
inline float bf16_float(float x) {
  return std::bit_cast<float>(static_cast<uint32_t>(bf16_bits(x)) << 16);
}

// thread_scratch's tags: the rounded copies of A and B.
struct RoundedA;
struct RoundedB;

// The stored matrix behind a view ([rows, cols] or, transposed, [cols, rows]), rounded into
// `out` packed (row stride = its stored column count), as the view of the same orientation.
template <class Out, class Round>
MatrixView<const Out> rounded(MatrixView<const float> v, Out* out, Round round) {
  const int64_t rows = v.transposed ? v.cols : v.rows;
  const int64_t cols = v.transposed ? v.rows : v.cols;
  for (int64_t i = 0; i < rows; ++i) {
    const float* src = v.data + i * v.ld;
    Out* dst = out + i * cols;
    for (int64_t j = 0; j < cols; ++j) dst[j] = round(src[j]);
  }
  return {out, v.rows, v.cols, cols, v.transposed};
}

size_t stored(MatrixView<const float> v) {
  return static_cast<size_t>(v.rows) * static_cast<size_t>(v.cols);
}

}  // namespace

void set_matmul_precision(MatmulPrecision p) {
  precision.store(static_cast<int>(p), std::memory_order_release);
  if (p == MatmulPrecision::BFloat16 && !bf16_supported() && !noticed.exchange(true)) {
    const std::string why =
        cpu_capability() < CpuCapability::Avx512Bf16
            ? "the CPU level in use has no AVX512_BF16 (" + cpu_capability_info() + ")"
            : std::string("this CPU has no AVX512_BF16");
    std::fprintf(stderr,
                 "tapegrad: set_matmul_precision(BFloat16): %s, so matrix products stay float32\n",
                 why.c_str());
  }
}

MatmulPrecision matmul_precision() {
  return static_cast<MatmulPrecision>(precision.load(std::memory_order_acquire));
}

bool bf16_supported() {
  return cpu_capability() >= CpuCapability::Avx512Bf16 &&
         !pretend_no_bf16.load(std::memory_order_acquire);
}

bool bf16_products() {
  return matmul_precision() == MatmulPrecision::BFloat16 && bf16_supported();
}

const char* bf16_engine_info() {
  static const std::string info = [] {
    if (!cpu_has_avx512_bf16()) return std::string("none (no AVX512_BF16: float32 products)");
    std::string s = "tapegrad's AVX512_BF16 kernel (operands rounded as they are packed)";
    if (detail::dnnl_linked()) {
      s += "; " + std::string(detail::dnnl_version()) +
           " bf16 matmul (f32 output) for products of at least 2^20 multiply-adds whose width "
           "the own kernel's 48-column panels pad by a tenth or more";
    }
    s += "; matrix-vector products on bf16 operands in the float32 kernel";
    return s;
  }();
  return info.c_str();
}

namespace detail {

float round_to_bf16(float x) {
  return bf16_float(x);
}

void pretend_no_bf16_for_testing(bool pretend) {
  pretend_no_bf16.store(pretend, std::memory_order_release);
  noticed.store(false);
}

void set_bf16_engine_for_testing(Bf16Engine e) {
  engine.store(static_cast<int>(e), std::memory_order_release);
}

void bf16_gemm(MatrixView<float> c, MatrixView<const float> a, MatrixView<const float> b,
               const GemmOptions& options) {
  const int64_t m = c.rows, n = c.cols, k = a.cols;
  if (k == 0) return gemm_highest<float>(c, a, b, options);
  const auto chosen = static_cast<Bf16Engine>(engine.load(std::memory_order_acquire));
  const double multiply_adds =
      static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const auto alpha = static_cast<float>(options.alpha);
  const bool serial = !options.parallel || num_threads() == 1;
  const bool vector = m == 1 || n == 1;
  const int64_t padded = (n + kPanel - 1) / kPanel * kPanel;
  const bool narrow_panel = (padded - n) * 10 >= padded;
  const bool dnnl = dnnl_linked() && !vector &&
                    (chosen == Bf16Engine::OneDNN || (chosen == Bf16Engine::Auto && narrow_panel &&
                                                      multiply_adds >= kDnnlMinMultiplyAdds));
  const bool own =
      !dnnl && (chosen == Bf16Engine::Tapegrad || (chosen == Bf16Engine::Auto && !vector));
  if (own) {
    // Each thread packs all of the smaller operand and its own part of the larger.
    const auto run = [&](MatrixView<float> cp, MatrixView<const float> ap,
                         MatrixView<const float> bp) {
      dpbf16_gemm(cp, ap, bp, alpha, options.accumulate);
    };
    const double flops = 2.0 * multiply_adds;
    if (serial || flops < kParallelFlops) return run(c, a, b);
    return split_over_threads<float>(c, a, b, flops, 16, kPanel, run);
  }
  if (!dnnl) {
    const auto ar = rounded(a, thread_scratch<RoundedA, float>(stored(a)), bf16_float);
    const auto br = rounded(b, thread_scratch<RoundedB, float>(stored(b)), bf16_float);
    return gemm_highest<float>(c, ar, br, options);
  }
  const auto ar = rounded(a, thread_scratch<RoundedA, uint16_t>(stored(a)), bf16_bits);
  const auto br = rounded(b, thread_scratch<RoundedB, uint16_t>(stored(b)), bf16_bits);
  // Blocks of C's rows (multiples of 16), one oneDNN call each, on tapegrad's threads.
  const int64_t tiles = (m + 15) / 16;
  const auto run = [&](int64_t begin, int64_t end) {
    const uint16_t* a0 = ar.data + (ar.transposed ? begin : begin * ar.ld);
    dnnl_bf16_gemm(c.data + begin * c.ld, c.ld, a0, ar.ld, ar.transposed, br.data, br.ld,
                   br.transposed, end - begin, n, k, alpha, options.accumulate);
  };
  if (serial) return run(0, m);
  parallel_for(tiles, 2.0 * multiply_adds / static_cast<double>(tiles),
               [&](int, int64_t t0, int64_t t1) { run(t0 * 16, std::min(m, t1 * 16)); });
}

}  // namespace detail

}  // namespace tapegrad
