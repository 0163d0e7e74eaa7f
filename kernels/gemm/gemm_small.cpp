// The small-product kernel of kernels/gemm/gemm.cpp: C (+)= alpha·A·B with no packing of A, for
// products whose B panel sits in the first-level caches (see small_gemm_takes; a transposed B is
// packed row-major first). Register blocks
// of 8 rows x 32 columns of C (16 accumulators): per step of k, two vectors of B's row and eight
// broadcast elements of A feed sixteen multiply-adds. At the shapes of tapegrad-bench's small
// attention workload ([512, 64]·[64, 64], [64, 512]·[512, 64], [512, 64]·[64, 64]ᵀ) the step's
// nine products took 1.3x less time than on OpenBLAS 0.3.21's sgemm (perf shares of the step,
// AVX-512 Zen 5), whose packing and beta pass cost more there than the multiply-adds. Each
// element of C is summed in k order by one thread: the same bits whatever the thread split.
#include <algorithm>

#include <tapegrad/kernels/gemm/gemm_kernels.h>
#include <tapegrad/kernels/scratch.h>
#include <tapegrad/kernels/vec.h>

namespace tapegrad::detail {

namespace {

constexpr int kRowsPerBlock = 8;
constexpr int64_t kMaxMultiplyAdds = int64_t{1} << 22;  // m·n·k
constexpr int64_t kMaxPackedB = int64_t{1} << 16;       // elements of a transposed B, packed

// thread_scratch's tag: B's rows, when B is a transposed view, packed row-major [k, n].
struct PackedB;

struct Operands {
  int64_t k, a_row, a_col, ldb, ldc;  // a(i, p) = a[i·a_row + p·a_col], b(p, j) = b[p·ldb + j]
  bool accumulate;
};

// C[i0.., j0..] (+)= alpha·A[i0.., :]·B[:, j0..] for R rows and NV vectors of columns.
template <class T, int R, int NV>
void block(const Operands& o, const T* a, const T* b, T* c, T alpha) {
  constexpr int64_t L = kLanes<T>;
  Vec<T> acc[R][NV] = {};
  for (int64_t p = 0; p < o.k; ++p) {
    Vec<T> bv[NV];
    for (int v = 0; v < NV; ++v) vload(bv[v], b + p * o.ldb + v * L);
    for (int r = 0; r < R; ++r) {
      const T x = a[r * o.a_row + p * o.a_col];
      for (int v = 0; v < NV; ++v) acc[r][v] += x * bv[v];
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < NV; ++v) {
      Vec<T> out = acc[r][v] * alpha;
      T* dst = c + r * o.ldc + v * L;
      if (o.accumulate) {
        Vec<T> cur;
        vload(cur, dst);
        out = cur + out;
      }
      vstore(dst, out);
    }
  }
}

// Blocks of 8 rows, then one block of the last m % 8.
template <class T, int NV>
void columns(int64_t m, const Operands& o, const T* a, const T* b, T* c, T alpha) {
  row_blocks<kRowsPerBlock>(m, [&]<int R>(int64_t i0) {
    block<T, R, NV>(o, a + i0 * o.a_row, b, c + i0 * o.ldc, alpha);
  });
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
  constexpr int64_t L = kLanes<T>;
  const int64_t m = c.rows, n = c.cols, k = a.cols;
  const T* bp = b.data;
  int64_t ldb = b.ld;
  if (b.transposed) {  // b(p, j) = b.data[j·ld + p]: pack it as [k, n], L x L blocks at a time
    T* packed = thread_scratch<PackedB, T>(static_cast<size_t>(n * k));
    const int64_t k_blocks = k / L * L;
    for (int64_t j0 = 0; j0 < n; j0 += L) {
      for (int64_t p0 = 0; p0 < k_blocks; p0 += L) {
        Vec<T> r[L];
        for (int64_t i = 0; i < L; ++i) vload(r[i], b.data + (j0 + i) * b.ld + p0);
        transpose_block<T>(r);
        for (int64_t i = 0; i < L; ++i) vstore(packed + (p0 + i) * n + j0, r[i]);
      }
      for (int64_t j = j0; j < j0 + L; ++j) {
        for (int64_t p = k_blocks; p < k; ++p) packed[p * n + j] = b.data[j * b.ld + p];
      }
    }
    bp = packed;
    ldb = n;
  }
  const Operands o{k, a.transposed ? 1 : a.ld, a.transposed ? a.ld : 1, ldb, c.ld, accumulate};
  int64_t j0 = 0;
  for (; j0 + 2 * L <= n; j0 += 2 * L) columns<T, 2>(m, o, a.data, bp + j0, c.data + j0, alpha);
  if (j0 < n) columns<T, 1>(m, o, a.data, bp + j0, c.data + j0, alpha);
}

template bool small_gemm_takes<float>(int64_t, int64_t, int64_t);
template bool small_gemm_takes<double>(int64_t, int64_t, int64_t);
template void small_gemm<float>(MatrixView<float>, MatrixView<const float>, MatrixView<const float>,
                                float, bool);
template void small_gemm<double>(MatrixView<double>, MatrixView<const double>,
                                 MatrixView<const double>, double, bool);

}  // namespace tapegrad::detail
