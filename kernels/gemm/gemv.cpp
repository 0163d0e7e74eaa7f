// The one-row matrix-vector product: the rows split over threads, each part on the CPU level's
// variant of the kernel (kernels/gemm/gemv_isa.cpp).
#include <tapegrad/kernels/gemm/gemv.h>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/gemm/gemv_isa.h>

namespace tapegrad {

namespace {

using Rows = void (*)(const float*, const float*, float*, int64_t, int64_t, int64_t);

// The variant of the level in use (one atomic load, so it follows the test hook): AVX-512's at
// avx512 and above, AVX2's at avx2, else baseline.
Rows rows_for(CpuCapability level) {
#if defined(__x86_64__)
  if (level >= CpuCapability::Avx512) return &detail::gemv_avx512::rows;
  if (level == CpuCapability::Avx2) return &detail::gemv_avx2::rows;
#endif
  (void)level;
  return &detail::gemv_baseline::rows;
}

}  // namespace

void gemv(const float* w, const float* x, const float* bias, float* y, int64_t out, int64_t in) {
  // Parts split at multiples of 8 rows. Each row's sum is the same whichever block kernel or
  // part computes it (rows are independent), so the bits do not depend on the thread count.
  // The cost is counted in memory time, not multiply-adds (parallel_for's unit is a flop): a
  // 64-byte line from DRAM takes as long as ~64 flops, so even a [768, 768] product, ~0.2 ms
  // of streaming on one core, is worth a second thread.
  const Rows rows = rows_for(cpu_capability());
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
