// The small-product kernel of kernels/gemm/gemm.cpp: C (+)= alpha·A·B with no packing of A, for
// products whose B panel sits in the first-level caches (see small_gemm_takes; a transposed B is
// packed row-major first, here, by kernels/gemm/transpose.h). The register blocks are
// gemm_small_isa.cpp's, built once per instruction-set level; the level in use (kernels/cpu/cpu.h:
// the CPU's, or TAPEGRAD_CPU_CAPABILITY's) picks one, through a function pointer. At the shapes of
// tapegrad-bench's small attention workload ([512, 64]·[64, 64], [64, 512]·[512, 64],
// [512, 64]·[64, 64]ᵀ) the step's nine products took 1.3x less time on the AVX-512 blocks than on
// OpenBLAS 0.3.21's sgemm (perf shares of the step, AVX-512 Zen 5), whose packing and beta pass
// cost more there than the multiply-adds. Each element of C is summed in k order by one thread:
// the same bits whatever the thread split.
#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/gemm/gemm_kernels.h>
#include <tapegrad/kernels/gemm/gemm_small_isa.h>
#include <tapegrad/kernels/gemm/transpose.h>
#include <tapegrad/kernels/scratch.h>
#include <tapegrad/kernels/vec.h>

namespace tapegrad::detail {

namespace {

constexpr int64_t kMaxMultiplyAdds = int64_t{1} << 22;  // m·n·k
constexpr int64_t kMaxPackedB = int64_t{1} << 16;       // elements of a transposed B, packed

// thread_scratch's tag: B's rows, when B is a transposed view, packed row-major [k, n].
struct PackedB;

template <class T>
using Kernel = void (*)(const SmallGemmArgs<T>&);

// The variant of a level (the level in use is one atomic load, so the pointer is picked per
// product at no cost, and follows the test hook): AVX-512's blocks at avx512 and above, AVX2's at
// avx2, else baseline.
template <class T>
Kernel<T> kernel_for(CpuCapability level) {
#if defined(__x86_64__)
  if (level >= CpuCapability::Avx512) return &small_gemm_avx512::run;
  if (level == CpuCapability::Avx2) return &small_gemm_avx2::run;
#endif
  (void)level;
  return &small_gemm_baseline::run;
}

}  // namespace

template <class T>
bool small_gemm_takes(int64_t m, int64_t n, int64_t k) {
  // By the shape alone, never by strides or transposes: two ops that compute the same product
  // from differently stored operands (a fused op on views of [B, T, C], the composed ops on
  // copies) then run the same kernel and get the same bits.
  return k > 0 && n % kLanes<T> == 0 && m * n * k <= kMaxMultiplyAdds && n * k <= kMaxPackedB;
}

template <class T>
void small_gemm(MatrixView<T> c, MatrixView<const T> a, MatrixView<const T> b, T alpha,
                bool accumulate) {
  const int64_t m = c.rows, n = c.cols, k = a.cols;
  const T* bp = b.data;
  int64_t ldb = b.ld;
  if (b.transposed) {  // b(p, j) = b.data[j·ld + p]: pack it as [k, n]
    T* packed = thread_scratch<PackedB, T>(static_cast<size_t>(n * k));
    transpose(b.data, b.ld, n, k, packed, n);
    bp = packed;
    ldb = n;
  }
  SmallGemmArgs<T> args{};
  args.m = m, args.n = n, args.k = k;
  args.a_row = a.transposed ? 1 : a.ld;
  args.a_col = a.transposed ? a.ld : 1;
  args.ldb = ldb, args.ldc = c.ld;
  args.a = a.data, args.b = bp, args.c = c.data;
  args.alpha = alpha, args.accumulate = accumulate;
  kernel_for<T>(cpu_capability())(args);
}

template bool small_gemm_takes<float>(int64_t, int64_t, int64_t);
template bool small_gemm_takes<double>(int64_t, int64_t, int64_t);
template void small_gemm<float>(MatrixView<float>, MatrixView<const float>, MatrixView<const float>,
                                float, bool);
template void small_gemm<double>(MatrixView<double>, MatrixView<const double>,
                                 MatrixView<const double>, double, bool);

}  // namespace tapegrad::detail
