// Eigen's blocked GEMM kernel, driven with packing buffers from a per-thread scratch. This is the
// one file of tapegrad that uses Eigen::internal, and why: Eigen's public product
// (C.noalias() += A * B) mallocs and frees its packing buffers on every large product (66 heap
// allocations per gpt2 attention step before this driver). The buffers can be handed to Eigen
// only through level3_blocking's protected members, so ScratchBlocking below subclasses it, and
// the kernel is called as general_matrix_matrix_product<...>::run, whose signature (with the
// result's inner increment, new in 3.4) is Eigen 3.4's. Checked against Eigen 3.4.0 (Debian 12's
// libeigen3-dev); any other version stops the build below instead of guessing.
#include <Eigen/Core>

#include <tapegrad/kernels/gemm/gemm_kernels.h>
#include <tapegrad/kernels/scratch.h>

#if !EIGEN_VERSION_AT_LEAST(3, 4, 0) || EIGEN_VERSION_AT_LEAST(3, 4, 90)
#error \
    "kernels/gemm/gemm_eigen.cpp drives Eigen 3.4's internal GEMM kernel: check it against this Eigen version"
#endif

namespace tapegrad::detail {

namespace {

using Eigen::Index;

struct EigenPanels;  // thread_scratch's tag: the packed panels of A and B

// Eigen's blocking sizes for a product, with the packed panels pointed at our scratch.
template <class T>
class ScratchBlocking : public Eigen::internal::level3_blocking<T, T> {
 public:
  // rows/cols/depth of the column-major product Eigen actually runs (a row-major C is run
  // as Cᵀ = op(B)ᵀ·op(A)ᵀ, so rows = n and cols = m).
  ScratchBlocking(Index rows, Index cols, Index depth) {
    this->m_mc = rows;
    this->m_nc = cols;
    this->m_kc = depth;
    Eigen::internal::computeProductBlockingSizes<T, T, 1, Index>(this->m_kc, this->m_mc, this->m_nc,
                                                                 Index(1));
    const size_t size_a = static_cast<size_t>(this->m_mc * this->m_kc);
    const size_t size_b = static_cast<size_t>(this->m_kc * this->m_nc);
    // Each panel 64-byte aligned inside the one buffer.
    const size_t padded_a = (size_a + 15) / 16 * 16;
    T* scratch = thread_scratch<EigenPanels, T>(padded_a + size_b);
    this->m_blockA = scratch;
    this->m_blockB = scratch + padded_a;
  }
};

}  // namespace

template <class T>
void eigen_blocked_gemm(MatrixView<T> c, MatrixView<const T> a, MatrixView<const T> b, T alpha) {
  const Index m = c.rows, n = c.cols, k = a.cols;
  ScratchBlocking<T> blocking(n, m, k);
  using Eigen::ColMajor;
  using Eigen::RowMajor;
  // Row-major A [m, k] is what Eigen calls RowMajor storage of the lhs; its transpose stored as
  // row-major [k, m] is the same memory read ColMajor.
  auto call = [&]<int LhsOrder, int RhsOrder>() {
    Eigen::internal::general_matrix_matrix_product<Index, T, LhsOrder, false, T, RhsOrder, false,
                                                   RowMajor, 1>::run(m, n, k, a.data, a.ld, b.data,
                                                                     b.ld, c.data, 1, c.ld, alpha,
                                                                     blocking);
  };
  if (!a.transposed && !b.transposed) {
    call.template operator()<RowMajor, RowMajor>();
  } else if (!a.transposed && b.transposed) {
    call.template operator()<RowMajor, ColMajor>();
  } else if (a.transposed && !b.transposed) {
    call.template operator()<ColMajor, RowMajor>();
  } else {
    call.template operator()<ColMajor, ColMajor>();
  }
}

template void eigen_blocked_gemm<float>(MatrixView<float>, MatrixView<const float>,
                                        MatrixView<const float>, float);
template void eigen_blocked_gemm<double>(MatrixView<double>, MatrixView<const double>,
                                         MatrixView<const double>, double);

}  // namespace tapegrad::detail
