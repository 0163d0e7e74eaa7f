// OpenBLAS's GEMM for kernels/gemm/gemm.cpp, linked at build time (TAPEGRAD_HAVE_OPENBLAS, set by
// CMake for this file only when it finds OpenBLAS), and empty stand-ins when it is not.
#include <string>
#include <type_traits>

#include <tapegrad/kernels/gemm/gemm_kernels.h>

#ifdef TAPEGRAD_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace tapegrad::detail {

#ifdef TAPEGRAD_HAVE_OPENBLAS

bool openblas_linked() {
  return true;
}

const char* openblas_init() {
  static const std::string info = [] {
    // tapegrad splits products over its own threads and calls OpenBLAS from each, one product
    // per thread: OpenBLAS's own pool would oversubscribe the cores. (The pool's threads are
    // created when the library loads, unless OPENBLAS_NUM_THREADS=1 is set; they sleep.)
    openblas_set_num_threads(1);
    return std::string(openblas_get_config()) + " (kernels: " + openblas_get_corename() + ")";
  }();
  return info.c_str();
}

template <class T>
void openblas_gemm(MatrixView<T> c, MatrixView<const T> a, MatrixView<const T> b, T alpha,
                   bool accumulate) {
  const CBLAS_TRANSPOSE ta = a.transposed ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = b.transposed ? CblasTrans : CblasNoTrans;
  const T beta = accumulate ? T(1) : T(0);  // beta 0: C is written, never read
  const auto i = [](int64_t v) { return static_cast<blasint>(v); };
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, ta, tb, i(c.rows), i(c.cols), i(a.cols), alpha, a.data, i(a.ld),
                b.data, i(b.ld), beta, c.data, i(c.ld));
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, i(c.rows), i(c.cols), i(a.cols), alpha, a.data, i(a.ld),
                b.data, i(b.ld), beta, c.data, i(c.ld));
  }
}

#else

bool openblas_linked() {
  return false;
}
const char* openblas_init() {
  return nullptr;
}
template <class T>
void openblas_gemm(MatrixView<T>, MatrixView<const T>, MatrixView<const T>, T, bool) {}

#endif

template void openblas_gemm<float>(MatrixView<float>, MatrixView<const float>,
                                   MatrixView<const float>, float, bool);
template void openblas_gemm<double>(MatrixView<double>, MatrixView<const double>,
                                    MatrixView<const double>, double, bool);

}  // namespace tapegrad::detail
