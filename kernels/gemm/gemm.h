// The matrix product every op uses, written as math: gemm(C, A, B.t()) is C = A·Bᵀ, with views
// of row-major memory (transposes read in place), split over set_num_threads() threads.
//
// Which path runs, for C [m, n] = A [m, k]·B [k, n]: the first rule that applies.
// 1. float32 at MatmulPrecision::BFloat16 on a CPU with AVX512_BF16 (matmul_precision.h):
//    gemm_bf16.cpp. m or n of 1: the operands rounded to bf16, then the rules below; at least
//    2^20 multiply-adds whose n the 48-column panels pad by a tenth or more: oneDNN's bf16 matmul
//    when linked (gemm_dnnl.cpp); every other product: the own AVX512_BF16 kernel
//    (gemm_dpbf16.cpp).
// 2. tiny, m + n + k < 20: gemm_tiny, inline in gemm_kernels.h.
// 3. small, n a multiple of 16 floats or 8 doubles, m·n·k <= 2^22 and n·k <= 2^16: the
//    register-blocked small kernel (gemm_small.cpp), whatever the backend, in the variant of the
//    CPU level in use (kernels/cpu/cpu.h; TAPEGRAD_CPU_CAPABILITY forces a lower one): avx512
//    and avx512_bf16 8 rows x 2 ZMM vectors, avx2 6 rows x 2 YMM vectors, baseline 4 rows x 2
//    XMM vectors (gemm_small_isa.cpp, compiled once per level). The same bits at avx2 and above;
//    baseline has no FMA and differs in the last places.
// 4. m or n of 1, or k of 0: Eigen's matrix-vector product (gemm.cpp).
// 5. the backend (below): OpenBLAS's sgemm/dgemm (gemm_openblas.cpp), the default where it is
//    linked, or Eigen's blocked kernel (gemm_eigen.cpp).
// Products of at least kParallelFlops are split over the threads by blocks of C's rows or
// columns, each part taking the rule of the whole product. Beside gemm, for inference layers:
// gemv.h (one float32 row times a weight, linear's decode step: ops/linear.cpp) and
// linear_bf16.h (bfloat16 weights: one row through gemv_bf16, more rows widened by blocks into
// this gemm). A kernel for several instruction sets is one file compiled once per level, as
// gemm_small_isa.cpp (CMakeLists.txt's tapegrad_small_gemm_variant), chosen by cpu_capability()
// where its rule above runs.
#pragma once

#include <cstdint>
#include <type_traits>

namespace tapegrad {

// A matrix in row-major memory: element (i, j) is data[i * ld + j], or, when `transposed`, the
// view is the transpose of the row-major [cols, rows] matrix at data (element (i, j) is
// data[j * ld + i]). rows and cols are always the view's own (after the transpose).
// T is float or double, const for operands that are only read.
template <class T>
struct MatrixView {
  T* data;
  int64_t rows, cols;
  int64_t ld;  // elements between consecutive stored rows
  bool transposed = false;

  MatrixView t() const { return {data, cols, rows, ld, !transposed}; }
  operator MatrixView<const T>() const requires(!std::is_const_v<T>) {
    return {data, rows, cols, ld, transposed};
  }
};

// The row-major [rows, cols] matrix at data, rows `ld` elements apart (default: packed).
template <class T>
MatrixView<T> matrix(T* data, int64_t rows, int64_t cols, int64_t ld) {
  return {data, rows, cols, ld, false};
}
template <class T>
MatrixView<T> matrix(T* data, int64_t rows, int64_t cols) {
  return {data, rows, cols, cols, false};
}

struct GemmOptions {
  double alpha = 1;         // C = alpha·A·B (cast to the element type)
  bool accumulate = false;  // C += alpha·A·B instead of C = alpha·A·B (C is then never read)
  bool parallel = true;     // false keeps the product on the calling thread, for callers that
                            // already split their work over threads
};

// C = alpha·A·B, or C += alpha·A·B with {.accumulate = true}; A is [m, k], B [k, n], C [m, n]
// (any of them transposed views). C must not overlap A or B. Large products are split over the
// threads by blocks of C's rows (or columns when C is wide): each element is summed by one
// thread in a fixed order, so results are bit-identical across runs for a given backend, thread
// count and (OpenBLAS) kernel. Throws std::logic_error when the shapes do not chain.
template <class T>
void gemm(MatrixView<T> c, std::type_identity_t<MatrixView<const T>> a,
          std::type_identity_t<MatrixView<const T>> b, const GemmOptions& options = {});

extern template void gemm<float>(MatrixView<float>, MatrixView<const float>,
                                 MatrixView<const float>, const GemmOptions&);
extern template void gemm<double>(MatrixView<double>, MatrixView<const double>,
                                  MatrixView<const double>, const GemmOptions&);

// The products gemm() has run in this process (any thread) and their multiply-adds (m·n·k): for
// tests that check which products a step runs (a frozen weight's gradient product must not).
struct GemmCount {
  uint64_t products = 0;
  uint64_t multiply_adds = 0;
};
GemmCount gemm_count();

// The kernel for products that are neither tiny nor matrix-vector (those always run on Eigen's
// kernels, which allocate nothing there) nor small (n a multiple of 16 floats or 8 doubles,
// m·n·k <= 2^22, n·k <= 2^16, decided by the shape alone, so a product gives the same bits
// however its operands are stored: those run on tapegrad's own register-blocked kernel,
// kernels/gemm/gemm_small.cpp, whatever the backend, faster there than either library's packing).
// - Eigen: built into tapegrad, always available.
// - OpenBLAS: linked at build time when CMake finds it (TAPEGRAD_OPENBLAS=AUTO, the default, or
//   ON), and then the default. It runs single-threaded inside each of tapegrad's own threads
//   (tapegrad calls openblas_set_num_threads(1) once, when OpenBLAS is first chosen, used or
//   described, which also limits any other OpenBLAS use of the process) and picks its kernels
//   for the CPU when the library loads, or as OPENBLAS_CORETYPE says. Its results differ from
//   Eigen's in the last bits.
// The starting backend comes from the environment, read once: TAPEGRAD_GEMM=eigen|openblas, or
// unset for the default; any other value, or openblas in a build without it, throws
// tapegrad::Error at the first product. The choice is one atomic value: set_gemm_backend may be
// called from any thread, and a product started before the call finishes on the backend it
// began with. Set it between steps, like set_num_threads, so a step runs on one backend.
enum class GemmBackend { Eigen, OpenBLAS };
// Returns false, keeping the current backend, when this build has no OpenBLAS.
bool set_gemm_backend(GemmBackend backend);
GemmBackend gemm_backend();
bool gemm_backend_available(GemmBackend backend);
// "Eigen 3.4.0" or "OpenBLAS 0.3.21 ... (kernels: Cooperlake)", of the current backend or of
// the one named (nullptr when it is not available).
const char* gemm_backend_info();
const char* gemm_backend_info(GemmBackend backend);

}  // namespace tapegrad
