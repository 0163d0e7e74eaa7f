// Products with bfloat16 weights for inference (nn::use_bf16_weights): y = x·Wᵀ + b with W held
// as bfloat16 bits and x, b, y float32.
//
// A bfloat16 value is the top half of a float32, so each weight is widened exactly (a shift) and
// multiplied with the float32 x, sums in float32: the only rounding beyond float32 arithmetic is
// the weights' own. Half the bytes of float32 weights are read, which is what a decode step,
// bound by memory, gains from.
#pragma once

#include <cstdint>

namespace tapegrad {

// dst[i] = the bits of src[i] rounded to bfloat16 (to nearest, ties to even, NaN kept quiet), the
// rule of detail::round_to_bf16 (kernels/gemm/matmul_precision.h).
void round_to_bf16_bits(const float* src, uint16_t* dst, int64_t n);

// The float32 value of bfloat16 bits (exact).
float bf16_bits_to_float(uint16_t bits);

// y[o] = Σ_i W[o, i]·x[i] (+ bias[o] when bias is not null), o in [0, out): one row x [in], W
// [out, in] row-major bfloat16 bits (torch's nn.Linear layout). As kernels/gemm/gemv.h: rows of W
// split over the thread setting's threads, each output the same sum however many threads run, so
// the bits are the same across runs and thread counts. No AVX512_BF16 instruction is used (see the
// .cpp), so every CPU runs the same code. y must not alias w, x or bias.
void gemv_bf16(const uint16_t* w, const float* x, const float* bias, float* y, int64_t out,
               int64_t in);

// Y = X·Wᵀ (+ b) for X [rows, in], Y [rows, out], any rows (a prefill): blocks of W's rows are
// widened to float32 in a per-thread buffer (no float32 copy of W is kept) and multiplied on the
// float32 GEMM (kernels/gemm/gemm.h). Blocks are split over the threads; each block's product is
// the same call whatever the thread count, so the bits are too. Y must not alias the inputs.
void linear_bf16(const uint16_t* w, const float* x, const float* bias, float* y, int64_t rows,
                 int64_t out, int64_t in);

}  // namespace tapegrad
