// Tests for ops/detail/gemm.cpp: every transpose combination, strides, accumulation and alpha, on the
// tiny, matrix-vector and blocked paths, serial and split over 2 threads.
#include "ops/detail/gemm.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "graph/threads.h"

using namespace tapegrad;

namespace {

// C = beta·C + alpha·op(A)·op(B) the slow way, in double.
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

template <class T>
void check_case(int64_t m, int64_t n, int64_t k, bool ta, bool tb, bool accumulate, double alpha,
                double tol) {
  std::mt19937 rng(static_cast<uint32_t>(m * 131 + n * 17 + k + (ta ? 7 : 0) + (tb ? 3 : 0)));
  std::uniform_real_distribution<double> u(-1, 1);
  // Padded strides, so a wrong stride reads the padding.
  const int64_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 2, ldc = n + 5;
  std::vector<double> a(static_cast<size_t>((ta ? k : m) * lda)),
      b(static_cast<size_t>((tb ? n : k) * ldb)), c(static_cast<size_t>(m * ldc));
  for (double& x : a) x = u(rng);
  for (double& x : b) x = u(rng);
  for (double& x : c) x = u(rng);
  const std::vector<double> want =
      reference(m, n, k, a, lda, ta, b, ldb, tb, c, ldc, accumulate, alpha);
  std::vector<T> at(a.begin(), a.end()), bt(b.begin(), b.end()), ct(c.begin(), c.end());
  gemm<T>(m, n, k, at.data(), lda, ta, bt.data(), ldb, tb, ct.data(), ldc, accumulate,
          static_cast<T>(alpha));
  double worst = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const size_t idx = static_cast<size_t>(i * ldc + j);
      // Outside the n columns, C's padding must be untouched.
      const double expected = j < n ? want[idx] : c[idx];
      worst = std::max(worst, std::abs(static_cast<double>(ct[idx]) - expected));
    }
  }
  INFO("m " << m << " n " << n << " k " << k << " ta " << ta << " tb " << tb << " acc "
            << accumulate << " alpha " << alpha);
  CHECK(worst < tol);
}

}  // namespace

namespace {
void check_all_cases() {
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    INFO("threads " << threads);
    // tiny (coefficient-based), matrix-vector, blocked, and blocked large enough to split.
    for (auto [m, n, k] : {std::array<int64_t, 3>{3, 4, 5},
                           {1, 7, 30},
                           {30, 1, 9},
                           {33, 47, 29},
                           {200, 150, 70},
                           {40, 300, 64},
                           {5, 6, 0}}) {
      for (bool ta : {false, true}) {
        for (bool tb : {false, true}) {
          check_case<double>(m, n, k, ta, tb, false, 1.0, 1e-12);
          check_case<double>(m, n, k, ta, tb, true, -0.5, 1e-12);
          check_case<float>(m, n, k, ta, tb, true, 1.0, 1e-4);
        }
      }
    }
  }
  set_num_threads(1);
}
}  // namespace

TEST_CASE("gemm: all transposes, strides, accumulation and alpha, on every path", "[gemm]") {
  REQUIRE(gemm_backend() == GemmBackend::Eigen);
  check_all_cases();
}

TEST_CASE("gemm: the OpenBLAS backend computes the same products", "[gemm]") {
  if (!set_gemm_backend(GemmBackend::OpenBLAS)) {
    WARN("libopenblas.so.0 cannot be loaded (apt-get install libopenblas0-pthread): not checked");
    return;
  }
  INFO(gemm_backend_info());
  check_all_cases();
  set_gemm_backend(GemmBackend::Eigen);
  CHECK(gemm_backend() == GemmBackend::Eigen);
}

TEST_CASE("gemm: a split product gives the same bits run to run, on each backend",
          "[gemm][threads]") {
  const int64_t m = 256, n = 192, k = 128;
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& x : a) x = u(rng);
  for (float& x : b) x = u(rng);
  for (GemmBackend backend : {GemmBackend::Eigen, GemmBackend::OpenBLAS}) {
    if (!set_gemm_backend(backend)) continue;  // OpenBLAS not installed
    INFO(gemm_backend_info());
    set_num_threads(2);
    std::vector<float> c1(static_cast<size_t>(m * n)), c2(c1.size());
    gemm<float>(m, n, k, a.data(), k, false, b.data(), n, false, c1.data(), n, false);
    gemm<float>(m, n, k, a.data(), k, false, b.data(), n, false, c2.data(), n, false);
    set_num_threads(1);
    CHECK(c1 == c2);
  }
  set_gemm_backend(GemmBackend::Eigen);
}
