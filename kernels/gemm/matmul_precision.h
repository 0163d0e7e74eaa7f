// How float32 matrix products treat their operands, as torch's set_float32_matmul_precision:
// Highest (exact float32 products) or BFloat16 (operands rounded to bfloat16, sums in float32).
#pragma once

namespace tapegrad {

// Highest: every float32 product multiplies its float32 operands (the default).
// BFloat16: every float32 product (linear, matmul, the attention products, forward and
// backward: all of them run through kernels/gemm/gemm.h) takes its operands rounded to bfloat16
// (round to nearest even, NaN kept, as torch) and accumulates in float32, as torch's
// set_float32_matmul_precision("medium") and bf16 matmul. Tensors, gradients and master weights
// stay float32; float64 products are never rounded. It runs only where the CPU has AVX512_BF16:
// elsewhere the first set_matmul_precision(BFloat16) prints one notice to stderr and products
// stay float32 (matmul_precision() still says BFloat16; bf16_products() says what runs).
// One process-wide atomic value, like the GEMM backend: set it between steps.
enum class MatmulPrecision { Highest, BFloat16 };
void set_matmul_precision(MatmulPrecision precision);
MatmulPrecision matmul_precision();
// Whether float32 products run with bfloat16 operands now (BFloat16 set and supported).
bool bf16_products();
// Whether the CPU level in use has AVX512_BF16: this CPU's unless TAPEGRAD_CPU_CAPABILITY forces
// it lower (kernels/cpu/cpu.h); the test hook below can make it say no too.
bool bf16_supported();
// What runs bf16 products: "tapegrad's AVX512_BF16 kernel ...; oneDNN 2.6.3 bf16 matmul ... for
// products of at least 2^20 multiply-adds whose width ...; ...", or the float32 kernel only.
const char* bf16_engine_info();

// Sets a precision for its lifetime and restores the previous one.
class MatmulPrecisionGuard {
 public:
  explicit MatmulPrecisionGuard(MatmulPrecision precision) : previous_(matmul_precision()) {
    set_matmul_precision(precision);
  }
  ~MatmulPrecisionGuard() { set_matmul_precision(previous_); }
  MatmulPrecisionGuard(const MatmulPrecisionGuard&) = delete;
  MatmulPrecisionGuard& operator=(const MatmulPrecisionGuard&) = delete;

 private:
  MatmulPrecision previous_;
};

namespace detail {
// Test hook: true makes bf16_supported() say no (as on a CPU without AVX512_BF16), false
// restores the CPU's answer. The notice is then printed again at most once.
void pretend_no_bf16_for_testing(bool pretend);
// Test hook: the bf16 products' engines. Auto: by shape (the default); Rounded: every product
// on rounded operands through the float32 kernel; OneDNN: every product oneDNN takes (m, n > 1,
// k > 0) on oneDNN, when linked; Tapegrad: every product (k > 0) on tapegrad's own AVX512_BF16
// kernel (kernels/gemm/gemm_dpbf16.cpp).
enum class Bf16Engine { Auto, Rounded, OneDNN, Tapegrad };
void set_bf16_engine_for_testing(Bf16Engine engine);
// x rounded to the nearest bfloat16 (ties to even; NaN stays NaN), as a float.
float round_to_bf16(float x);
}  // namespace detail

}  // namespace tapegrad
