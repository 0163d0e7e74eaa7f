// Tests for kernels/gemm/gemm.cpp: every transpose combination, strides, accumulation and alpha, on
// the tiny, matrix-vector, small (gemm_small.cpp) and blocked paths, serial and split over 2
// threads, on both backends.
#include <tapegrad/kernels/gemm/gemm.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/threads.h>
#include "tests/compare.h"

using namespace tapegrad;
using testing::max_abs_difference;
namespace {

// Whether this build linked OpenBLAS (CMake's TAPEGRAD_HAVE_OPENBLAS): then every OpenBLAS check
// must run, and fails if OpenBLAS is not there.
constexpr bool kOpenBlasExpected = TAPEGRAD_EXPECT_OPENBLAS != 0;

std::vector<GemmBackend> backends() {
  if (kOpenBlasExpected) return {GemmBackend::Eigen, GemmBackend::OpenBLAS};
  return {GemmBackend::Eigen};
}

// Restores the backend a test case found.
struct BackendGuard {
  GemmBackend saved = gemm_backend();
  ~BackendGuard() { set_gemm_backend(saved); }
};

// C = (accumulate ? C : 0) + alpha·op(A)·op(B) the slow way, in double.
std::vector<double> reference(int64_t m, int64_t n, int64_t k, const std::vector<double>& a,
                              int64_t lda, bool ta, const std::vector<double>& b, int64_t ldb,
                              bool tb, std::vector<double> c, int64_t ldc, bool accumulate,
                              double alpha) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double av =
            ta ? a[static_cast<size_t>(p * lda + i)] : a[static_cast<size_t>(i * lda + p)];
        const double bv =
            tb ? b[static_cast<size_t>(j * ldb + p)] : b[static_cast<size_t>(p * ldb + j)];
        s += av * bv;
      }
      double& out = c[static_cast<size_t>(i * ldc + j)];
      out = (accumulate ? out : 0.0) + alpha * s;
    }
  }
  return c;
}

// The worst error of one product against the reference, C's padding included (it must stay
// untouched); NaN when the product made a NaN.
// dense: A and B stored without padding (rows back to back, as matmul makes them).
template <class T>
double product_error(int64_t m, int64_t n, int64_t k, bool ta, bool tb, bool accumulate,
                     double alpha, double poison = 0, bool dense = false) {
  std::mt19937 rng(static_cast<uint32_t>(m * 131 + n * 17 + k + (ta ? 7 : 0) + (tb ? 3 : 0)));
  std::uniform_real_distribution<double> u(-1, 1);
  // Padded strides, so a wrong stride reads the padding.
  const int64_t lda = (ta ? m : k) + (dense ? 0 : 3), ldb = (tb ? k : n) + (dense ? 0 : 2),
                ldc = n + 5;
  std::vector<double> a(static_cast<size_t>((ta ? k : m) * lda)),
      b(static_cast<size_t>((tb ? n : k) * ldb)), c(static_cast<size_t>(m * ldc));
  for (double& x : a) x = u(rng);
  for (double& x : b) x = u(rng);
  for (double& x : c) x = u(rng);
  const std::vector<double> want =
      reference(m, n, k, a, lda, ta, b, ldb, tb, c, ldc, accumulate, alpha);
  std::vector<T> at(a.begin(), a.end()), bt(b.begin(), b.end()), ct(c.begin(), c.end());
  if (poison != 0 && !at.empty()) at[0] = static_cast<T>(poison);
  const MatrixView<const T> av =
      ta ? matrix<const T>(at.data(), k, m, lda).t() : matrix<const T>(at.data(), m, k, lda);
  const MatrixView<const T> bv =
      tb ? matrix<const T>(bt.data(), n, k, ldb).t() : matrix<const T>(bt.data(), k, n, ldb);
  gemm(matrix(ct.data(), m, n, ldc), av, bv, {.alpha = alpha, .accumulate = accumulate});
  return max_abs_difference(std::vector<double>(ct.begin(), ct.end()), want);
}

void check_all_cases() {
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    INFO("threads " << threads);
    // tiny (coefficient-based), matrix-vector, blocked, and blocked large enough to split (by
    // rows, then by columns); then the small kernel (n a multiple of 16: 8-row blocks and the
    // rest, 32- and 16-column blocks; large enough to split at 512 x 64 x 64; a long k).
    for (auto [m, n, k] : {std::array<int64_t, 3>{3, 4, 5},
                           {1, 7, 30},
                           {30, 1, 9},
                           {33, 47, 29},
                           {200, 150, 70},
                           {40, 300, 64},
                           {5, 6, 0},
                           {25, 30, 0},
                           {37, 48, 29},
                           {512, 64, 64},
                           {9, 16, 300}}) {
      for (bool ta : {false, true}) {
        for (bool tb : {false, true}) {
          INFO("m " << m << " n " << n << " k " << k << " ta " << ta << " tb " << tb);
          CHECK(product_error<double>(m, n, k, ta, tb, false, 1.0) < 1e-12);
          CHECK(product_error<double>(m, n, k, ta, tb, true, -0.5) < 1e-12);
          CHECK(product_error<double>(m, n, k, ta, tb, false, 0.25) < 1e-12);
          CHECK(product_error<float>(m, n, k, ta, tb, true, 1.0) < 1e-4);
          CHECK(product_error<float>(m, n, k, ta, tb, false, -2.0) < 1e-4);
          CHECK(product_error<double>(m, n, k, ta, tb, true, -0.5, 0, true) < 1e-12);
          CHECK(product_error<float>(m, n, k, ta, tb, false, -2.0, 0, true) < 1e-4);
        }
      }
    }
  }
  set_num_threads(1);
}

}  // namespace

TEST_CASE("gemm: the error maximum sees a NaN", "[gemm]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(max_abs_difference({0.0, nan, 0.0}, {0.0, 0.0, 0.0}) < 1.0);  // NaN, then finite
  CHECK_FALSE(max_abs_difference({0.0, 0.0}, {nan, 0.0}) < 1.0);
  // A NaN in A reaches C on every path and backend, and the check sees it.
  BackendGuard guard;
  for (GemmBackend backend : backends()) {
    REQUIRE(set_gemm_backend(backend));
    for (auto [m, n, k] : {std::array<int64_t, 3>{3, 4, 5}, {1, 7, 30}, {33, 47, 29}}) {
      INFO(gemm_backend_info() << ": m " << m << " n " << n << " k " << k);
      CHECK_FALSE(product_error<float>(m, n, k, false, false, false, 1.0, nan) < 1.0);
    }
  }
}

TEST_CASE("gemm: all transposes, strides, accumulation and alpha, on Eigen's kernel", "[gemm]") {
  BackendGuard guard;
  REQUIRE(set_gemm_backend(GemmBackend::Eigen));
  REQUIRE(gemm_backend() == GemmBackend::Eigen);
  check_all_cases();
}

TEST_CASE("gemm: the OpenBLAS backend computes the same products", "[gemm]") {
  BackendGuard guard;
  // Linked at build time: a build with OpenBLAS that cannot use it fails here (or does not
  // start at all without libopenblas.so.0); a build without it must say so.
  REQUIRE(gemm_backend_available(GemmBackend::OpenBLAS) == kOpenBlasExpected);
  if (!kOpenBlasExpected) {
    CHECK_FALSE(set_gemm_backend(GemmBackend::OpenBLAS));
    CHECK(gemm_backend_info(GemmBackend::OpenBLAS) == nullptr);
    return;
  }
  REQUIRE(set_gemm_backend(GemmBackend::OpenBLAS));
  REQUIRE(gemm_backend() == GemmBackend::OpenBLAS);
  INFO(gemm_backend_info());
  CHECK(std::string(gemm_backend_info()).find("OpenBLAS") != std::string::npos);
  check_all_cases();
}

TEST_CASE("gemm: views compose: a transposed C, row and column blocks", "[gemm]") {
  // Cᵀ = A·B written through a transposed view of C equals C = Bᵀ·Aᵀ.
  BackendGuard guard;
  for (GemmBackend backend : backends()) {
    REQUIRE(set_gemm_backend(backend));
    INFO(gemm_backend_info());
    const int64_t m = 37, n = 29, k = 41;
    std::vector<double> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u(-1, 1);
    for (double& x : a) x = u(rng);
    for (double& x : b) x = u(rng);
    std::vector<double> c1(static_cast<size_t>(m * n)), c2(static_cast<size_t>(n * m));
    gemm(matrix(c1.data(), m, n), matrix<const double>(a.data(), m, k),
         matrix<const double>(b.data(), k, n));
    gemm(matrix(c2.data(), n, m).t(), matrix<const double>(a.data(), m, k),
         matrix<const double>(b.data(), k, n));
    std::vector<double> c2t(c1.size());
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        c2t[static_cast<size_t>(i * n + j)] = c2[static_cast<size_t>(j * m + i)];
      }
    }
    CHECK(max_abs_difference(c1, c2t) < 1e-12);
    // Shapes that do not chain are refused before anything is written.
    CHECK_THROWS_AS(gemm(matrix(c1.data(), m, n), matrix<const double>(a.data(), m, k),
                         matrix<const double>(b.data(), k - 1, n)),
                    std::logic_error);
  }
}

TEST_CASE("gemm: a split product gives the same bits run to run, on each backend",
          "[gemm][threads]") {
  BackendGuard guard;
  const int64_t m = 256, n = 192, k = 128;
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& x : a) x = u(rng);
  for (float& x : b) x = u(rng);
  for (GemmBackend backend : backends()) {
    REQUIRE(set_gemm_backend(backend));
    INFO(gemm_backend_info());
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      std::vector<float> c1(static_cast<size_t>(m * n)), c2(c1.size());
      for (std::vector<float>* c : {&c1, &c2}) {
        gemm(matrix(c->data(), m, n), matrix<const float>(a.data(), m, k),
             matrix<const float>(b.data(), k, n).t().t());
      }
      CHECK(c1 == c2);
    }
    set_num_threads(1);
  }
}

TEST_CASE("gemm: the small-product kernel gives the same bits at 1 and 2 threads",
          "[gemm][threads]") {
  // [512, 64]·[64, 64] and its two gradient products' shapes, each large enough to split: every
  // element is summed in k order by one thread, whatever the split.
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(512 * 64), w(64 * 64), g(512 * 64);
  for (std::vector<float>* v : {&x, &w, &g}) {
    for (float& e : *v) e = u(rng);
  }
  auto products = [&] {
    std::vector<float> y(512 * 64), dw(64 * 64, 0.5f), dx(512 * 64);
    gemm(matrix(y.data(), 512, 64), matrix<const float>(x.data(), 512, 64),
         matrix<const float>(w.data(), 64, 64));
    gemm(matrix(dw.data(), 64, 64), matrix<const float>(x.data(), 512, 64).t(),
         matrix<const float>(g.data(), 512, 64), {.accumulate = true});
    gemm(matrix(dx.data(), 512, 64), matrix<const float>(g.data(), 512, 64),
         matrix<const float>(w.data(), 64, 64).t());
    return std::vector<std::vector<float>>{y, dw, dx};
  };
  set_num_threads(1);
  const auto one = products();
  set_num_threads(2);
  const auto two = products();
  set_num_threads(1);
  CHECK(one == two);
}

// Hidden: ctest runs it in processes of its own with TAPEGRAD_GEMM set (tests/CMakeLists.txt),
// since the variable is read once, at the process's first product.
TEST_CASE("gemm: the starting backend follows TAPEGRAD_GEMM", "[.][gemm-env]") {
  const char* env = std::getenv("TAPEGRAD_GEMM");
  const std::string value = env != nullptr ? env : "";
  INFO("TAPEGRAD_GEMM=" << value);
  if (value.empty()) {
    CHECK(gemm_backend() == (kOpenBlasExpected ? GemmBackend::OpenBLAS : GemmBackend::Eigen));
  } else if (value == "eigen") {
    CHECK(gemm_backend() == GemmBackend::Eigen);
  } else if (value == "openblas" && kOpenBlasExpected) {
    CHECK(gemm_backend() == GemmBackend::OpenBLAS);
  } else {
    // Unknown, or openblas without it: an Error at the first use, every time, and an explicit
    // choice still works.
    CHECK_THROWS_AS(gemm_backend(), Error);
    CHECK_THROWS_WITH(gemm_backend(), Catch::Contains("TAPEGRAD_GEMM=" + value));
    CHECK(set_gemm_backend(GemmBackend::Eigen));
    CHECK(gemm_backend() == GemmBackend::Eigen);
  }
}
