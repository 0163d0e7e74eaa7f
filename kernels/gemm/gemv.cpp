// The one-row matrix-vector product: the rows split over threads, each part on the CPU level's
// variant of the kernel (kernels/gemm/gemv_isa.cpp).
#include <tapegrad/kernels/gemm/gemv.h>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/gemm/gemv_isa.h>

namespace tapegrad {

detail::GemvKernels detail::gemv_kernels() {
  const CpuCapability level = cpu_capability();
#if defined(__x86_64__)
  if (level >= CpuCapability::Avx512)
    return {&detail::gemv_avx512::rows, &detail::gemv_avx512::rows_bf16};
  if (level == CpuCapability::Avx2)
    return {&detail::gemv_avx2::rows, &detail::gemv_avx2::rows_bf16};
#endif
  (void)level;
  return {&detail::gemv_baseline::rows, &detail::gemv_baseline::rows_bf16};
}

void gemv(const float* w, const float* x, const float* bias, float* y, int64_t out, int64_t in) {
  // Parts split at multiples of 8 rows. Each row's sum is the same whichever block kernel or
  // part computes it (rows are independent), so the bits do not depend on the thread count.
  // The cost is counted in memory time, not multiply-adds (parallel_for's unit is a flop): a
  // 64-byte line from DRAM takes as long as ~64 flops, so even a [768, 768] product, ~0.2 ms
  // of streaming on one core, is worth a second thread.
  const auto rows = detail::gemv_kernels().rows;
  const int64_t blocks = (out + 7) / 8;
  parallel_for(blocks, 16.0 * 8.0 * static_cast<double>(in), [&](int, int64_t b0, int64_t b1) {
    const int64_t begin = b0 * 8;
    const int64_t end = b1 * 8 < out ? b1 * 8 : out;
    rows(w, x, y, begin, end, in);
    if (bias != nullptr) {
      for (int64_t o = begin; o < end; ++o) y[o] += bias[o];
    }
  });
}

}  // namespace tapegrad
