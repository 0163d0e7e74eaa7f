// The matrix product every op uses: row-major C (+)= alpha·op(A)·op(B), transposes read in
// place, split over set_num_threads() threads, packing buffers kept per thread (no heap
// allocation per call once they have grown).
#pragma once

#include <cstdint>

namespace tapegrad {

// The kernel for products that are neither tiny nor matrix-vector. Eigen (the default) is built
// into tapegrad. OpenBLAS is loaded at run time from libopenblas.so.0 (Debian's
// libopenblas0-pthread; nothing to link), kept single-threaded inside each of tapegrad's parts,
// and picks its kernels for the CPU (or as OPENBLAS_CORETYPE says): faster where its kernels
// beat Eigen's (AVX-512 CPUs). Results are bit-identical run to run for a given backend, thread
// count and OpenBLAS kernel. Set it between steps, like set_num_threads.
enum class GemmBackend { Eigen, OpenBLAS };
// Returns false, keeping the current backend, when OpenBLAS cannot be loaded.
bool set_gemm_backend(GemmBackend backend);
GemmBackend gemm_backend();
// "Eigen 3.4.0" or "OpenBLAS 0.3.21 ... (kernels: Cooperlake)".
const char* gemm_backend_info();

// C [m, n] (row-major, row stride ldc) = alpha · op(A) · op(B), or += when `accumulate`.
// op(A) is [m, k]: A itself (row-major [m, k], row stride lda), or when trans_a the transpose
// of a row-major [k, m] A (row stride lda), read without a copy; likewise op(B) is [k, n].
// C must not overlap A or B. Large products are split over the threads by blocks of C's rows
// (or columns when C is wide): each element is summed by one thread in a fixed order, so results
// are bit-identical across runs for a given thread count. `parallel` = false keeps the product
// on the calling thread (for callers that already split their work over threads).
template <class T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, bool trans_a, const T* b,
          int64_t ldb, bool trans_b, T* c, int64_t ldc, bool accumulate, T alpha = T(1),
          bool parallel = true);

extern template void gemm<float>(int64_t, int64_t, int64_t, const float*, int64_t, bool,
                                 const float*, int64_t, bool, float*, int64_t, bool, float, bool);
extern template void gemm<double>(int64_t, int64_t, int64_t, const double*, int64_t, bool,
                                  const double*, int64_t, bool, double*, int64_t, bool, double,
                                  bool);

}  // namespace tapegrad
