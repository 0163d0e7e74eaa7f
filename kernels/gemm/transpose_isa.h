// The transpose kernel's variants per instruction set (kernels/gemm/transpose_isa.cpp, built once
// per level with that level's compiler flags), as kernels/gemm/transpose.cpp picks them. Only
// declarations here (kernels/cpu/isa_level.h says why).
#pragma once

#include <cstdint>

#include <tapegrad/kernels/cpu/isa_declare.h>

// dst (+)= srcᵀ: src [rows, cols] (rows src_ld apart) into dst [cols, rows] (dst_ld apart).
#define TAPEGRAD_TRANSPOSE_LEVEL_DECLARATIONS                                                \
  void transpose(const float* src, int64_t src_ld, int64_t rows, int64_t cols, float* dst,   \
                 int64_t dst_ld, bool add);                                                  \
  void transpose(const double* src, int64_t src_ld, int64_t rows, int64_t cols, double* dst, \
                 int64_t dst_ld, bool add);

namespace tapegrad::detail {
TAPEGRAD_DECLARE_PER_LEVEL(transpose, TAPEGRAD_TRANSPOSE_LEVEL_DECLARATIONS)
}  // namespace tapegrad::detail
#undef TAPEGRAD_TRANSPOSE_LEVEL_DECLARATIONS
