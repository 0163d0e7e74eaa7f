// gemm: the product C (+)= alpha·A·B over matrix views, split over the tapegrad thread pool;
// tiny products on gemm_kernels.h's loop, matrix-vector ones here, small ones on the
// small-product kernel (gemm_small.cpp, whatever the backend), blocked ones on Eigen's kernel
// (gemm_eigen.cpp) or OpenBLAS's (gemm_openblas.cpp), as the backend says.
#include <tapegrad/kernels/gemm/gemm.h>

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/gemm/gemm_kernels.h>
#include <tapegrad/kernels/gemm/matmul_precision.h>

namespace tapegrad {

namespace {

using Eigen::Index;

GemmBackend default_backend() {
  return detail::openblas_linked() ? GemmBackend::OpenBLAS : GemmBackend::Eigen;
}

// TAPEGRAD_GEMM, read once.
GemmBackend backend_from_environment() {
  const char* env = std::getenv("TAPEGRAD_GEMM");
  if (env == nullptr || *env == '\0') return default_backend();
  const std::string value = env;
  if (value == "eigen") return GemmBackend::Eigen;
  if (value == "openblas") {
    if (!detail::openblas_linked()) {
      throw Error(
          "TAPEGRAD_GEMM=openblas: this tapegrad was built without OpenBLAS (configure with "
          "-DTAPEGRAD_OPENBLAS=ON after `apt-get install libopenblas-dev`)");
    }
    return GemmBackend::OpenBLAS;
  }
  throw Error("TAPEGRAD_GEMM=" + value + ": expected eigen or openblas");
}

// The backend: one atomic value, kUnresolved until set_gemm_backend or the first product. An
// explicit choice wins without reading the environment; otherwise TAPEGRAD_GEMM is read once (a
// function-local static: thread-safe, retried while it throws) and stored if nothing was set
// meanwhile.
constexpr int kUnresolved = -1;
std::atomic<int> chosen_backend{kUnresolved};

GemmBackend current_backend() {
  const int chosen = chosen_backend.load(std::memory_order_acquire);
  if (chosen != kUnresolved) return static_cast<GemmBackend>(chosen);
  static const GemmBackend from_environment = [] {
    const GemmBackend b = backend_from_environment();
    if (b == GemmBackend::OpenBLAS) detail::openblas_init();
    return b;
  }();
  int expected = kUnresolved;
  chosen_backend.compare_exchange_strong(expected, static_cast<int>(from_environment),
                                         std::memory_order_acq_rel);
  return static_cast<GemmBackend>(chosen_backend.load(std::memory_order_acquire));
}

// C (+)= alpha·A·B on this thread.
// `small`: the whole product (before any split over threads) is one the small-product kernel
// takes, so every part runs on it.
template <class T>
void gemm_serial(MatrixView<T> c, MatrixView<const T> a, MatrixView<const T> b, T alpha,
                 bool accumulate, GemmBackend backend, bool small) {
  const Index m = c.rows, n = c.cols, k = a.cols;
  if (detail::is_tiny_product(m, n, k)) {
    detail::gemm_tiny(c, a, b, alpha, accumulate);
    return;
  }
  if (small) {
    detail::small_gemm(c, a, b, alpha, accumulate);
    return;
  }
  if (k == 0 || m == 1 || n == 1 || backend == GemmBackend::Eigen) {
    // These paths accumulate into C.
    if (!accumulate) {
      for (Index i = 0; i < m; ++i)
        std::memset(c.data + i * c.ld, 0, static_cast<size_t>(n) * sizeof(T));
    }
    if (k == 0) return;
  }
  if (m == 1 || n == 1) {
    // Matrix-vector products: Eigen's GEMV, which allocates nothing here (no temporaries for
    // noalias products of mapped operands).
    using Stride = Eigen::OuterStride<>;
    using RowM = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<RowM, 0, Stride> C(c.data, m, n, Stride(c.ld));
    auto run = [&](const auto& A, const auto& B) { C.noalias() += alpha * (A * B); };
    // The stored matrices; a transposed view is the transpose of its stored [cols, rows].
    Eigen::Map<const RowM, 0, Stride> As(a.data, a.transposed ? k : m, a.transposed ? m : k,
                                         Stride(a.ld));
    Eigen::Map<const RowM, 0, Stride> Bs(b.data, b.transposed ? n : k, b.transposed ? k : n,
                                         Stride(b.ld));
    if (a.transposed && b.transposed) {
      run(As.transpose(), Bs.transpose());
    } else if (a.transposed) {
      run(As.transpose(), Bs);
    } else if (b.transposed) {
      run(As, Bs.transpose());
    } else {
      run(As, Bs);
    }
    return;
  }
  if (backend == GemmBackend::OpenBLAS) {
    detail::openblas_gemm(c, a, b, alpha, accumulate);
  } else {
    detail::eigen_blocked_gemm(c, a, b, alpha);
  }
}

// gemm_count()'s counts, kept per thread: a locked add on a shared counter per product was a
// large part of a tiny product's cost. Each counter is written by its own thread only (a load
// and a store, no locked instruction) and read by gemm_count(); a thread's counts move to the
// registry's totals when it exits.
struct GemmCounter {
  std::atomic<uint64_t> products{0};
  std::atomic<uint64_t> multiply_adds{0};
  GemmCounter();
  ~GemmCounter();
  void add(uint64_t multiply_add_count) {
    products.store(products.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    multiply_adds.store(multiply_adds.load(std::memory_order_relaxed) + multiply_add_count,
                        std::memory_order_relaxed);
  }
};

struct CounterRegistry {
  std::mutex mutex;
  std::vector<GemmCounter*> live;
  GemmCount exited;
};

// Never destroyed: pool threads may exit (and retire their counters) during static destruction.
CounterRegistry& counter_registry() {
  static auto* registry = new CounterRegistry;
  return *registry;
}

GemmCounter::GemmCounter() {
  CounterRegistry& r = counter_registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  r.live.push_back(this);
}

GemmCounter::~GemmCounter() {
  CounterRegistry& r = counter_registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  r.exited.products += products.load(std::memory_order_relaxed);
  r.exited.multiply_adds += multiply_adds.load(std::memory_order_relaxed);
  std::erase(r.live, this);
}

thread_local GemmCounter this_thread_gemms;

}  // namespace

template <class T>
void gemm(MatrixView<T> c, std::type_identity_t<MatrixView<const T>> a,
          std::type_identity_t<MatrixView<const T>> b, const GemmOptions& options) {
  if constexpr (std::is_same_v<T, float>) {
    if (bf16_products()) {
      detail::check_chain(c, a, b);
      if (c.transposed) {
        gemm<T>(c.t(), b.t(), a.t(), options);
        return;
      }
      if (c.rows > 0 && c.cols > 0) detail::bf16_gemm(c, a, b, options);
      return;
    }
  }
  detail::gemm_highest<T>(c, a, b, options);
}

namespace detail {

template <class T>
void check_chain(MatrixView<T> c, MatrixView<const T> a, MatrixView<const T> b) {
  if (a.rows != c.rows || b.cols != c.cols || a.cols != b.rows) {
    throw std::logic_error("gemm: [" + std::to_string(c.rows) + ", " + std::to_string(c.cols) +
                           "] = [" + std::to_string(a.rows) + ", " + std::to_string(a.cols) +
                           "]·[" + std::to_string(b.rows) + ", " + std::to_string(b.cols) +
                           "] does not chain");
  }
}

template <class T>
void gemm_highest(MatrixView<T> c, MatrixView<const T> a, MatrixView<const T> b,
                  const GemmOptions& options) {
  check_chain(c, a, b);
  if (c.transposed) {
    // Cᵀ = A·B  <=>  C = Bᵀ·Aᵀ
    gemm_highest<T>(c.t(), b.t(), a.t(), options);
    return;
  }
  this_thread_gemms.add(static_cast<uint64_t>(c.rows) * static_cast<uint64_t>(c.cols) *
                        static_cast<uint64_t>(a.cols));
  if (c.rows <= 0 || c.cols <= 0) return;
  const T alpha = static_cast<T>(options.alpha);
  const int64_t m = c.rows, n = c.cols, k = a.cols;
  // What gemm_serial would run, without the backend and split choices.
  if (is_tiny_product(m, n, k)) {
    gemm_tiny(c, a, b, alpha, options.accumulate);
    return;
  }
  const GemmBackend backend = current_backend();  // one backend for the whole product
  const bool small = detail::small_gemm_takes<T>(m, n, k);
  const double flops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (!options.parallel || num_threads() == 1 || flops < detail::kParallelFlops) {
    gemm_serial<T>(c, a, b, alpha, options.accumulate, backend, small);
    return;
  }
  // Blocks of 16 rows or columns, so every part keeps whole register tiles.
  detail::split_over_threads<T>(
      c, a, b, flops, 16, 16,
      [&](MatrixView<T> cp, MatrixView<const T> ap, MatrixView<const T> bp) {
        gemm_serial<T>(cp, ap, bp, alpha, options.accumulate, backend, small);
      });
}

template void check_chain<float>(MatrixView<float>, MatrixView<const float>,
                                 MatrixView<const float>);
template void check_chain<double>(MatrixView<double>, MatrixView<const double>,
                                  MatrixView<const double>);
template void gemm_highest<float>(MatrixView<float>, MatrixView<const float>,
                                  MatrixView<const float>, const GemmOptions&);
template void gemm_highest<double>(MatrixView<double>, MatrixView<const double>,
                                   MatrixView<const double>, const GemmOptions&);

}  // namespace detail

bool gemm_backend_available(GemmBackend b) {
  return b == GemmBackend::Eigen || detail::openblas_linked();
}

bool set_gemm_backend(GemmBackend b) {
  if (!gemm_backend_available(b)) return false;
  if (b == GemmBackend::OpenBLAS) detail::openblas_init();
  chosen_backend.store(static_cast<int>(b), std::memory_order_release);
  return true;
}

GemmBackend gemm_backend() {
  return current_backend();
}

const char* gemm_backend_info(GemmBackend b) {
  static const std::string eigen = "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
                                   std::to_string(EIGEN_MAJOR_VERSION) + "." +
                                   std::to_string(EIGEN_MINOR_VERSION);
  return b == GemmBackend::Eigen ? eigen.c_str() : detail::openblas_init();
}

const char* gemm_backend_info() {
  return gemm_backend_info(gemm_backend());
}

template void gemm<float>(MatrixView<float>, MatrixView<const float>, MatrixView<const float>,
                          const GemmOptions&);
template void gemm<double>(MatrixView<double>, MatrixView<const double>, MatrixView<const double>,
                           const GemmOptions&);

GemmCount gemm_count() {
  CounterRegistry& r = counter_registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  GemmCount total = r.exited;
  for (const GemmCounter* c : r.live) {
    total.products += c->products.load(std::memory_order_relaxed);
    total.multiply_adds += c->multiply_adds.load(std::memory_order_relaxed);
  }
  return total;
}

}  // namespace tapegrad
