// The per-thread GEMM kernels behind kernels/gemm/gemm.cpp (not part of the API): Eigen's blocked
// kernel (gemm_eigen.cpp), OpenBLAS's (gemm_openblas.cpp), oneDNN's bf16 matmul (gemm_dnnl.cpp)
// and the bf16 products (gemm_bf16.cpp). C is never a transposed view in the kernels.
#pragma once

#include <algorithm>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/gemm/gemm.h>

namespace tapegrad::detail {

// x as computed, kept from being fused into a multiply-add with what follows: an empty asm the
// compiler cannot see through (it emits no instruction).
template <class T>
inline T unfused(T x) {
#if defined(__GNUC__) && defined(__x86_64__)
  asm("" : "+x"(x));
#elif defined(__GNUC__) && defined(__aarch64__)
  asm("" : "+w"(x));
#endif
  return x;
}

// Products this small (m + n + k < 20, Eigen's own cut-off for its coefficient-based path) are a
// few dozen multiply-adds: gemm runs them as the plain loop below, which beats any setup. Each
// sum starts from 0 and adds the products in order of k, each product rounded on its own, then
// is multiplied by alpha. Unfused, said explicitly: C++ lets GCC fuse a multiply and an add, and
// it fused some of these only where the loop was inlined or vectorised, so the bits depended on
// the caller; this way every caller computes what gemm.cpp's loop computes. Inline, so kernels
// made of such products (attention_one_block.cpp, the exact attention's tiny heads) run them
// without a gemm call.
inline bool is_tiny_product(int64_t m, int64_t n, int64_t k) {
  return m + n + k < 20;
}
// gemm_tiny's loop with k = K when K > 0 (the sum unrolled: no loop of a few iterations, with
// its branches, per element), else any k. gemm_tiny takes k up to 6 this way (the chapter 3
// sizes' heads and projections), the same sums in the same order.
template <class T, int K>
inline void gemm_tiny_k(MatrixView<T> c, MatrixView<const T> a, MatrixView<const T> b, T alpha,
                        bool accumulate) {
  const int64_t k = K > 0 ? K : a.cols;
  const int64_t a_row = a.transposed ? 1 : a.ld, a_col = a.transposed ? a.ld : 1;
  const int64_t b_row = b.transposed ? 1 : b.ld, b_col = b.transposed ? b.ld : 1;
  for (int64_t i = 0; i < c.rows; ++i) {
    for (int64_t j = 0; j < c.cols; ++j) {
      T s(0);
      for (int64_t p = 0; p < k; ++p)
        s += unfused(a.data[i * a_row + p * a_col] * b.data[p * b_row + j * b_col]);
      T& out = c.data[i * c.ld + j];
      out = accumulate ? out + unfused(alpha * s) : alpha * s;
    }
  }
}
template <class T>
inline void gemm_tiny(MatrixView<T> c, MatrixView<const T> a, MatrixView<const T> b, T alpha,
                      bool accumulate) {
  switch (a.cols) {
    case 1:
      return gemm_tiny_k<T, 1>(c, a, b, alpha, accumulate);
    case 2:
      return gemm_tiny_k<T, 2>(c, a, b, alpha, accumulate);
    case 3:
      return gemm_tiny_k<T, 3>(c, a, b, alpha, accumulate);
    case 4:
      return gemm_tiny_k<T, 4>(c, a, b, alpha, accumulate);
    case 5:
      return gemm_tiny_k<T, 5>(c, a, b, alpha, accumulate);
    case 6:
      return gemm_tiny_k<T, 6>(c, a, b, alpha, accumulate);
    default:
      return gemm_tiny_k<T, 0>(c, a, b, alpha, accumulate);
  }
}

// Throws std::logic_error when C = A·B does not chain.
template <class T>
void check_chain(MatrixView<T> c, MatrixView<const T> a, MatrixView<const T> b);
// gemm as it runs at MatmulPrecision::Highest (kernels/gemm/gemm.cpp).
template <class T>
void gemm_highest(MatrixView<T> c, MatrixView<const T> a, MatrixView<const T> b,
                  const GemmOptions& options);
// gemm's float32 products at MatmulPrecision::BFloat16 (kernels/gemm/gemm_bf16.cpp): C (+)=
// alpha·bf16(A)·bf16(B), sums in float32. C non-empty, not transposed, the shapes checked.
void bf16_gemm(MatrixView<float> c, MatrixView<const float> a, MatrixView<const float> b,
               const GemmOptions& options);

// C (+)= alpha·bf16(A)·bf16(B) on this thread with tapegrad's own AVX512_BF16 kernel
// (gemm_dpbf16.cpp): C non-empty, k > 0, only where bf16_supported().
void dpbf16_gemm(MatrixView<float> c, MatrixView<const float> a, MatrixView<const float> b,
                 float alpha, bool accumulate);
// The own kernel's panel of B: columns of C per register tile (three vectors of 16 floats).
inline constexpr int kDpbf16Panel = 48;

// Whether this build links oneDNN (TAPEGRAD_DNNL found it), and its version ("oneDNN 2.6.3").
bool dnnl_linked();
const char* dnnl_version();
// C (+)= alpha·A·B on this thread with oneDNN's bf16 matmul (f32 output): A [m, k] and B [k, n]
// bfloat16 bits (a transposed view reads the stored [k, m] or [n, k] in place), C float32 with
// row stride ldc. Only when dnnl_linked().
void dnnl_bf16_gemm(float* c, int64_t ldc, const uint16_t* a, int64_t lda, bool a_transposed,
                    const uint16_t* b, int64_t ldb, bool b_transposed, int64_t m, int64_t n,
                    int64_t k, float alpha, bool accumulate);

// Rows [begin, end) of a view, and its columns [begin, end).
template <class T>
MatrixView<T> row_block(MatrixView<T> v, int64_t begin, int64_t end) {
  v.data += v.transposed ? begin : begin * v.ld;
  v.rows = end - begin;
  return v;
}
template <class T>
MatrixView<T> col_block(MatrixView<T> v, int64_t begin, int64_t end) {
  return row_block(v.t(), begin, end).t();
}

// Below this many flops a product is not worth a second thread.
inline constexpr double kParallelFlops = 4e6;

// run(C part, A part, B part) for blocks of C over the threads: by rows, or by columns when C is
// wide, in multiples of row_step or col_step (whole register tiles), so each element of C is
// summed by one thread in the order a serial product sums it. `flops` is the whole product's.
template <class T, class Run>
void split_over_threads(MatrixView<T> c, MatrixView<const T> a, MatrixView<const T> b, double flops,
                        int64_t row_step, int64_t col_step, Run&& run) {
  const bool by_rows = c.rows >= c.cols;
  const int64_t step = by_rows ? row_step : col_step, extent = by_rows ? c.rows : c.cols;
  const int64_t blocks = (extent + step - 1) / step;
  parallel_for(blocks, flops / static_cast<double>(blocks), [&](int, int64_t b0, int64_t b1) {
    const int64_t begin = b0 * step, end = std::min(extent, b1 * step);
    if (by_rows) {
      run(row_block(c, begin, end), row_block(a, begin, end), b);
    } else {
      run(col_block(c, begin, end), a, col_block(b, begin, end));
    }
  });
}

// C += alpha·A·B on this thread, C non-empty, k > 0.
template <class T>
void eigen_blocked_gemm(MatrixView<T> c, MatrixView<const T> a, MatrixView<const T> b, T alpha);

// The small-product kernel (gemm_small.cpp), for either backend: whether it takes a whole
// product (by its shape alone: k > 0, n a multiple of the 64-byte vector, m·n·k at most 2^22,
// n·k at most 2^16), and C = alpha·A·B, or C += alpha·A·B when accumulate, on this thread (for
// any row or column block of a product it takes), in the variant of the CPU level in use
// (gemm_small_isa.h).
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
