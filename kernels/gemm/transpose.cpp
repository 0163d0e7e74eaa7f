// The transpose's dispatch: the variant of the CPU level in use (kernels/gemm/transpose_isa.cpp).
#include <tapegrad/kernels/gemm/transpose.h>

#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/gemm/transpose_isa.h>

namespace tapegrad::detail {

// The variant of the level in use (one atomic load, so it follows the test hook): AVX-512's at
// avx512 and above, AVX2's at avx2, else baseline.
template <class T>
void transpose(const T* src, int64_t src_ld, int64_t rows, int64_t cols, T* dst, int64_t dst_ld,
               bool add) {
#if defined(__x86_64__)
  const CpuCapability level = cpu_capability();
  if (level >= CpuCapability::Avx512) {
    return transpose_avx512::transpose(src, src_ld, rows, cols, dst, dst_ld, add);
  }
  if (level == CpuCapability::Avx2) {
    return transpose_avx2::transpose(src, src_ld, rows, cols, dst, dst_ld, add);
  }
#endif
  transpose_baseline::transpose(src, src_ld, rows, cols, dst, dst_ld, add);
}

template void transpose<float>(const float*, int64_t, int64_t, int64_t, float*, int64_t, bool);
template void transpose<double>(const double*, int64_t, int64_t, int64_t, double*, int64_t, bool);

}  // namespace tapegrad::detail
