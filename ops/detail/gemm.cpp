// gemm: Eigen's blocked GEMM kernel driven directly, so that packing buffers come from a
// per-thread scratch (Eigen would malloc them on every large product) and work splits over the
// tapegrad thread pool; or OpenBLAS's, loaded at run time, when chosen.
#include "ops/detail/gemm.h"

#include <dlfcn.h>

#include <Eigen/Core>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include "graph/threads.h"

namespace tapegrad {

namespace {

using Eigen::Index;

// OpenBLAS's CBLAS entry points, resolved at run time (blasint is int in Debian's build).
struct OpenBlas {
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);
  using Dgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*,
                         int, double, double*, int);
  Sgemm sgemm = nullptr;
  Dgemm dgemm = nullptr;
  std::string info;
};
constexpr int kCblasRowMajor = 101, kCblasNoTrans = 111, kCblasTrans = 112;

GemmBackend backend = GemmBackend::Eigen;
const OpenBlas* openblas = nullptr;

const OpenBlas* load_openblas() {
  static const OpenBlas* loaded = []() -> const OpenBlas* {
    // Without this, OpenBLAS starts a pool of (cores - 1) threads at load, which tapegrad never
    // uses (it calls OpenBLAS from its own threads, one product each) but which spin and yield.
    // A value the program set itself is kept.
    setenv("OPENBLAS_NUM_THREADS", "1", /*overwrite=*/0);
    void* h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return nullptr;
    auto* o = new OpenBlas;  // lives as long as the process, like the library
    o->sgemm = reinterpret_cast<OpenBlas::Sgemm>(dlsym(h, "cblas_sgemm"));
    o->dgemm = reinterpret_cast<OpenBlas::Dgemm>(dlsym(h, "cblas_dgemm"));
    using SetThreads = void (*)(int);
    using Str = char* (*)();
    auto set_threads = reinterpret_cast<SetThreads>(dlsym(h, "openblas_set_num_threads"));
    auto config = reinterpret_cast<Str>(dlsym(h, "openblas_get_config"));
    auto core = reinterpret_cast<Str>(dlsym(h, "openblas_get_corename"));
    if (o->sgemm == nullptr || o->dgemm == nullptr || set_threads == nullptr) {
      delete o;
      return nullptr;
    }
    set_threads(1);  // tapegrad splits the work itself
    o->info = config != nullptr ? config() : "OpenBLAS";
    if (core != nullptr) o->info += std::string(" (kernels: ") + core() + ")";
    return o;
  }();
  return loaded;
}

// Below this many multiply-adds a product is not worth a second thread.
constexpr double kParallelFlops = 4e6;

// A per-thread buffer that only grows: after the first steps, products allocate nothing.
template <class T>
T* thread_scratch(size_t elements) {
  struct Buffer {
    std::unique_ptr<T[], void (*)(T*)> data{nullptr,
                                            [](T* p) { Eigen::internal::aligned_free(p); }};
    size_t size = 0;
  };
  thread_local Buffer buffer;
  if (buffer.size < elements) {
    buffer.data.reset(static_cast<T*>(Eigen::internal::aligned_malloc(elements * sizeof(T))));
    buffer.size = elements;
  }
  return buffer.data.get();
}

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
    T* scratch = thread_scratch<T>(padded_a + size_b);
    this->m_blockA = scratch;
    this->m_blockB = scratch + padded_a;
  }
};

// C block (+)= alpha·op(A)·op(B) on this thread.
// Products this small (Eigen's own cut-off for its coefficient-based path) are a few dozen
// multiply-adds: a plain loop over the strided operands beats any setup.
template <class T>
void gemm_tiny(Index m, Index n, Index k, const T* a, Index lda, bool trans_a, const T* b,
               Index ldb, bool trans_b, T* c, Index ldc, bool accumulate, T alpha) {
  const Index a_row = trans_a ? 1 : lda, a_col = trans_a ? lda : 1;
  const Index b_row = trans_b ? 1 : ldb, b_col = trans_b ? ldb : 1;
  for (Index i = 0; i < m; ++i) {
    for (Index j = 0; j < n; ++j) {
      T s(0);
      for (Index p = 0; p < k; ++p) s += a[i * a_row + p * a_col] * b[p * b_row + j * b_col];
      T& out = c[i * ldc + j];
      out = accumulate ? out + alpha * s : alpha * s;
    }
  }
}

// C block (+)= alpha·op(A)·op(B) on this thread.
template <class T>
void gemm_serial(Index m, Index n, Index k, const T* a, Index lda, bool trans_a, const T* b,
                 Index ldb, bool trans_b, T* c, Index ldc, bool accumulate, T alpha) {
  if (m + n + k < 20) {
    gemm_tiny(m, n, k, a, lda, trans_a, b, ldb, trans_b, c, ldc, accumulate, alpha);
    return;
  }
  if (k == 0 || m == 1 || n == 1 || backend == GemmBackend::Eigen) {
    if (!accumulate) {
      for (Index i = 0; i < m; ++i) std::memset(c + i * ldc, 0, static_cast<size_t>(n) * sizeof(T));
    }
    if (k == 0) return;
  }
  using Stride = Eigen::OuterStride<>;
  using RowM = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  if (m == 1 || n == 1) {
    // Matrix-vector products: Eigen's GEMV, which allocates nothing here (no temporaries for
    // noalias products of mapped operands).
    Eigen::Map<RowM, 0, Stride> C(c, m, n, Stride(ldc));
    auto run = [&](const auto& A, const auto& B) { C.noalias() += alpha * (A * B); };
    Eigen::Map<const RowM, 0, Stride> Am(a, trans_a ? k : m, trans_a ? m : k, Stride(lda));
    Eigen::Map<const RowM, 0, Stride> Bm(b, trans_b ? n : k, trans_b ? k : n, Stride(ldb));
    if (trans_a && trans_b) {
      run(Am.transpose(), Bm.transpose());
    } else if (trans_a) {
      run(Am.transpose(), Bm);
    } else if (trans_b) {
      run(Am, Bm.transpose());
    } else {
      run(Am, Bm);
    }
    return;
  }
  if (backend == GemmBackend::OpenBLAS) {
    const int ta = trans_a ? kCblasTrans : kCblasNoTrans,
              tb = trans_b ? kCblasTrans : kCblasNoTrans;
    const T beta = accumulate ? T(1) : T(0);  // beta 0: C is written, never read
    const auto i = [](Index v) { return static_cast<int>(v); };
    if constexpr (std::is_same_v<T, float>) {
      openblas->sgemm(kCblasRowMajor, ta, tb, i(m), i(n), i(k), alpha, a, i(lda), b, i(ldb), beta,
                      c, i(ldc));
    } else {
      openblas->dgemm(kCblasRowMajor, ta, tb, i(m), i(n), i(k), alpha, a, i(lda), b, i(ldb), beta,
                      c, i(ldc));
    }
    return;
  }
  ScratchBlocking<T> blocking(n, m, k);
  using Eigen::ColMajor;
  using Eigen::RowMajor;
  // Row-major A [m, k] is what Eigen calls RowMajor storage of the lhs; its transpose stored as
  // row-major [k, m] is the same memory read ColMajor.
  auto call = [&]<int LhsOrder, int RhsOrder>() {
    Eigen::internal::general_matrix_matrix_product<Index, T, LhsOrder, false, T, RhsOrder, false,
                                                   RowMajor, 1>::run(m, n, k, a, lda, b, ldb, c, 1,
                                                                     ldc, alpha, blocking);
  };
  if (!trans_a && !trans_b) {
    call.template operator()<RowMajor, RowMajor>();
  } else if (!trans_a && trans_b) {
    call.template operator()<RowMajor, ColMajor>();
  } else if (trans_a && !trans_b) {
    call.template operator()<ColMajor, RowMajor>();
  } else {
    call.template operator()<ColMajor, ColMajor>();
  }
}

}  // namespace

template <class T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, bool trans_a, const T* b,
          int64_t ldb, bool trans_b, T* c, int64_t ldc, bool accumulate, T alpha, bool parallel) {
  if (m <= 0 || n <= 0) return;
  const double flops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (!parallel || num_threads() == 1 || flops < kParallelFlops) {
    gemm_serial<T>(m, n, k, a, lda, trans_a, b, ldb, trans_b, c, ldc, accumulate, alpha);
    return;
  }
  // Split C into row blocks (or column blocks when it is wide), in multiples of 16 so every
  // part keeps whole register tiles.
  const bool by_rows = m >= n;
  const int64_t extent = by_rows ? m : n;
  const int64_t tiles = (extent + 15) / 16;
  parallel_for(tiles, flops / static_cast<double>(tiles), [&](int, int64_t t0, int64_t t1) {
    const int64_t begin = t0 * 16, end = std::min(extent, t1 * 16);
    if (by_rows) {
      const T* a_part = trans_a ? a + begin : a + begin * lda;
      gemm_serial<T>(end - begin, n, k, a_part, lda, trans_a, b, ldb, trans_b, c + begin * ldc, ldc,
                     accumulate, alpha);
    } else {
      const T* b_part = trans_b ? b + begin * ldb : b + begin;
      gemm_serial<T>(m, end - begin, k, a, lda, trans_a, b_part, ldb, trans_b, c + begin, ldc,
                     accumulate, alpha);
    }
  });
}

bool set_gemm_backend(GemmBackend b) {
  if (b == GemmBackend::OpenBLAS) {
    openblas = load_openblas();
    if (openblas == nullptr) return false;
  }
  backend = b;
  return true;
}

GemmBackend gemm_backend() {
  return backend;
}

const char* gemm_backend_info() {
  static const std::string eigen = "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
                                   std::to_string(EIGEN_MAJOR_VERSION) + "." +
                                   std::to_string(EIGEN_MINOR_VERSION);
  return backend == GemmBackend::OpenBLAS ? openblas->info.c_str() : eigen.c_str();
}

template void gemm<float>(int64_t, int64_t, int64_t, const float*, int64_t, bool, const float*,
                          int64_t, bool, float*, int64_t, bool, float, bool);
template void gemm<double>(int64_t, int64_t, int64_t, const double*, int64_t, bool, const double*,
                           int64_t, bool, double*, int64_t, bool, double, bool);

}  // namespace tapegrad
