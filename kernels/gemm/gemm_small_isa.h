// The small-product kernel's variants per instruction set (kernels/gemm/gemm_small_isa.cpp, built
// once per level with that level's compiler flags), as gemm_small.cpp calls them.
//
// Everything gemm_small_isa.cpp defines lives in a namespace of its level (small_gemm_avx2, ...),
// against the one-definition-rule trap kernels/cpu/isa_level.h describes. Only plain structs and
// declarations here.
#pragma once

#include <cstdint>

#include <tapegrad/kernels/cpu/isa_declare.h>

namespace tapegrad::detail {

// C (+)= alpha·A·B for C [m, n] (n a multiple of 16 floats or 8 doubles, k > 0):
// a(i, p) = a[i·a_row + p·a_col], b(p, j) = b[p·ldb + j], c(i, j) = c[i·ldc + j].
template <class T>
struct SmallGemmArgs {
  int64_t m, n, k, a_row, a_col, ldb, ldc;
  const T* a;
  const T* b;
  T* c;
  T alpha;
  bool accumulate;
};

// The variants:
// - baseline x86-64 (SSE2, 16-byte vectors): blocks of 4 rows x 2 vectors. Its products are
//   rounded before they are added (no FMA), so its bits differ from the others' in the last
//   places. The only variant on other CPUs; on arm64, NEON: blocks of 6 rows x 4 vectors of 16
//   bytes (24 of 32 registers), the products fused, so the bits of AVX2 and AVX-512.
// - AVX2 and FMA (16 YMM registers): blocks of 6 rows x 2 vectors of 32 bytes, 12 accumulators.
// - AVX-512 F/BW/DQ/VL (32 ZMM registers): blocks of 8 rows x 2 vectors of 64 bytes, 16
//   accumulators.
TAPEGRAD_DECLARE_PER_LEVEL(small_gemm, void run(const SmallGemmArgs<float>& args);
                           void run(const SmallGemmArgs<double>& args);)

}  // namespace tapegrad::detail
