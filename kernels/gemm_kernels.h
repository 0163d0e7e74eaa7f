// The per-thread GEMM kernels behind kernels/gemm.cpp (not part of the API): Eigen's blocked
// kernel (gemm_eigen.cpp) and OpenBLAS's (gemm_openblas.cpp). C is never a transposed view here.
#pragma once

#include "kernels/gemm.h"

namespace tapegrad::detail {

// C += alpha·A·B on this thread, C non-empty, k > 0.
template <class T>
void eigen_blocked_gemm(MatrixView<T> c, MatrixView<const T> a, MatrixView<const T> b, T alpha);

// The small-product kernel (gemm_small.cpp), for either backend: whether it takes a whole
// product (by its shape alone: k > 0, n a multiple of the 64-byte vector, m·n·k at most 2^22,
// n·k at most 2^16), and C = alpha·A·B, or C += alpha·A·B when accumulate, on this thread (for
// any row or column block of a product it takes).
template <class T>
bool small_gemm_takes(int64_t m, int64_t n, int64_t k);
template <class T>
void small_gemm(MatrixView<T> c, MatrixView<const T> a, MatrixView<const T> b, T alpha,
                bool accumulate);

// Whether this build links OpenBLAS (TAPEGRAD_OPENBLAS found it).
bool openblas_linked();
// Sets OpenBLAS to one thread (once, thread-safe) and returns its description; nullptr when not
// linked.
const char* openblas_init();
// C = alpha·A·B, or C += alpha·A·B when accumulate, on this thread. Only after openblas_init().
template <class T>
void openblas_gemm(MatrixView<T> c, MatrixView<const T> a, MatrixView<const T> b, T alpha,
                   bool accumulate);

}  // namespace tapegrad::detail
