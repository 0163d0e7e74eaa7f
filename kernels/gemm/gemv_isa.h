// The matrix-vector kernel's variants per instruction set (kernels/gemm/gemv_isa.cpp, built once
// per level with that level's compiler flags), as kernels/gemm/gemv.cpp calls them. Only
// declarations here (kernels/cpu/isa_level.h says why).
#pragma once

#include <cstdint>

#include <tapegrad/kernels/cpu/isa_declare.h>

// Rows [begin, end) of y = W·x, W [*, in] row-major: each row summed in the same 64-byte lanes at
// every level, the products fused into the sums where the level has FMA (every level but x86's
// baseline), so the bits of avx2 and avx512 are the same. rows_bf16: W's bfloat16 bits (the high
// halves of float32s), and xs x reordered as linear_bf16.cpp's split_pairs does.
#define TAPEGRAD_GEMV_LEVEL_DECLARATIONS                                                       \
  void rows(const float* w, const float* x, float* y, int64_t begin, int64_t end, int64_t in); \
  void rows_bf16(const uint16_t* w, const float* xs, const float* x, float* y, int64_t begin,  \
                 int64_t end, int64_t in);

namespace tapegrad::detail {

TAPEGRAD_DECLARE_PER_LEVEL(gemv, TAPEGRAD_GEMV_LEVEL_DECLARATIONS)
#undef TAPEGRAD_GEMV_LEVEL_DECLARATIONS

// bfloat16 weights per block rows_bf16 widens at once (64 bytes): xs holds each full block's x as
// its 16 even elements, then its 16 odd ones.
constexpr int64_t kGemvBf16Block = 32;

// The variants of the CPU level in use (kernels/cpu/cpu.h; one atomic load, so it follows the test
// hook): AVX-512's at avx512 and above, AVX2's at avx2, else baseline. Defined in gemv.cpp.
struct GemvKernels {
  void (*rows)(const float* w, const float* x, float* y, int64_t begin, int64_t end, int64_t in);
  void (*rows_bf16)(const uint16_t* w, const float* xs, const float* x, float* y, int64_t begin,
                    int64_t end, int64_t in);
};
GemvKernels gemv_kernels();

}  // namespace tapegrad::detail
