// The transpose of a strided block, on the CPU level's variant (kernels/gemm/transpose_isa.cpp):
// the small-product kernel's packing of a transposed B and the exact attention's kᵀ and its
// backward. Internal to kernels/ and ops/.
#pragma once

#include <cstdint>

namespace tapegrad::detail {

// dst (+)= srcᵀ: src [rows, cols] (rows src_ld apart) into dst [cols, rows] (dst_ld apart); with
// add, each element of dst plus its source. The same bits at every level. T: float or double.
template <class T>
void transpose(const T* src, int64_t src_ld, int64_t rows, int64_t cols, T* dst, int64_t dst_ld,
               bool add = false);

}  // namespace tapegrad::detail
