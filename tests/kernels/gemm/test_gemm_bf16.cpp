// Tests for the bf16 products (kernels/gemm/matmul_precision.h, kernels/gemm/gemm_bf16.cpp,
// kernels/gemm/gemm_dpbf16.cpp, kernels/gemm/gemm_dnnl.cpp): rounding as torch's, each product
// against float64 (no worse than torch's bf16 matmul, and within float32 summation of the exactly
// rounded operands), on every engine (tapegrad's own kernel, oneDNN, rounded operands in the
// float32 kernel, and the choice by shape), every transpose, alpha and accumulation, past each of
// the own kernel's blocks, the same bits at any thread count; NaN and infinity; the path of a CPU
// without AVX512_BF16; float64 never rounded. The product tests need AVX512_BF16: elsewhere they
// say they were skipped.
#include <unistd.h>

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/gemm/gemm.h>
#include <tapegrad/kernels/gemm/gemm_kernels.h>
#include <tapegrad/kernels/gemm/matmul_precision.h>
#include "tests/compare.h"  // worse: NaN-aware maxima
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;
using tapegrad::testing::worse;
namespace {

// make_bf16_goldens.py's operand(): the same integer hash, exact in double, then float.
std::vector<float> hashed(int64_t rows, int64_t cols, int64_t seed) {
  std::vector<float> x(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows * cols; ++i) {
    const uint64_t h =
        (static_cast<uint64_t>(i) * 2654435761ull + static_cast<uint64_t>(seed) * 40503ull) %
        (uint64_t{1} << 32);
    x[static_cast<size_t>(i)] =
        static_cast<float>(2.0 * static_cast<double>(h) / 4294967296.0 - 1.0);
  }
  return x;
}

std::vector<float> uniform(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> x(n);
  for (float& v : x) v = u(rng);
  return x;
}

float rounded(float x) {
  return detail::round_to_bf16(x);
}

// The view's element (i, j).
double at(const MatrixView<const float>& v, int64_t i, int64_t j) {
  return v.transposed ? v.data[j * v.ld + i] : v.data[i * v.ld + j];
}

// C = A·B in float64, of the operands as given or rounded to bf16 first; and Σ|a·b| per element
// (the scale of float32 summation's error).
void reference(MatrixView<const float> a, MatrixView<const float> b, bool round,
               std::vector<double>& c, std::vector<double>& magnitude) {
  c.assign(static_cast<size_t>(a.rows * b.cols), 0.0);
  magnitude.assign(c.size(), 0.0);
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t j = 0; j < b.cols; ++j) {
      double s = 0, m = 0;
      for (int64_t p = 0; p < a.cols; ++p) {
        const double x = round ? rounded(static_cast<float>(at(a, i, p))) : at(a, i, p);
        const double y = round ? rounded(static_cast<float>(at(b, p, j))) : at(b, p, j);
        s += x * y;
        m += std::abs(x * y);
      }
      c[static_cast<size_t>(i * b.cols + j)] = s;
      magnitude[static_cast<size_t>(i * b.cols + j)] = m;
    }
  }
}

std::vector<detail::Bf16Engine> engines() {
  std::vector<detail::Bf16Engine> e = {detail::Bf16Engine::Auto, detail::Bf16Engine::Rounded,
                                       detail::Bf16Engine::Tapegrad};
  if (detail::dnnl_linked()) e.push_back(detail::Bf16Engine::OneDNN);
  return e;
}

const char* engine_name(detail::Bf16Engine e) {
  return e == detail::Bf16Engine::Auto       ? "auto"
         : e == detail::Bf16Engine::Rounded  ? "rounded"
         : e == detail::Bf16Engine::Tapegrad ? "tapegrad"
                                             : "oneDNN";
}

// Whether the bf16 product tests can run here; says so when they cannot.
bool bf16_here() {
  if (bf16_supported()) return true;
  WARN("SKIPPED: this CPU has no AVX512_BF16, so the bf16 product checks did not run");
  return false;
}

// Sets the engine for a scope.
struct EngineScope {
  explicit EngineScope(detail::Bf16Engine e) { detail::set_bf16_engine_for_testing(e); }
  ~EngineScope() { detail::set_bf16_engine_for_testing(detail::Bf16Engine::Auto); }
};

}  // namespace

TEST_CASE("round_to_bf16 rounds to nearest, ties to even, as torch", "[gemm][bf16]") {
  const auto bits = [](uint32_t u) { return std::bit_cast<float>(u); };
  CHECK(rounded(1.0f) == 1.0f);
  CHECK(rounded(bits(0x3f808000u)) == bits(0x3f800000u));  // tie, down to even
  CHECK(rounded(bits(0x3f818000u)) == bits(0x3f820000u));  // tie, up to even
  CHECK(rounded(bits(0x3f808001u)) == bits(0x3f810000u));  // above the tie
  CHECK(rounded(bits(0x00012345u)) == bits(0x00010000u));  // subnormals kept, not flushed
  CHECK(rounded(bits(0x7f7fffffu)) == std::numeric_limits<float>::infinity());  // overflows
  CHECK(rounded(-std::numeric_limits<float>::infinity()) ==
        -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(rounded(std::numeric_limits<float>::quiet_NaN())));
  CHECK(std::isnan(rounded(bits(0x7f800001u))));  // a signalling NaN stays NaN
}

TEST_CASE("bf16 products: error against float64 no worse than torch's bf16 matmul",
          "[gemm][bf16]") {
  if (!bf16_here()) return;
  const testing::GoldenFile golden("bf16", "gemm_bf16_goldens.txt");
  for (const auto& [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{16, 64, 48},
                                {33, 96, 40},
                                {24, 160, 32},
                                {8, 768, 16}}) {
    const std::vector<float> a = hashed(m, k, 1), b = hashed(k, n, 2);
    const auto av = matrix(a.data(), m, k), bv = matrix(b.data(), k, n);
    std::vector<double> exact, magnitude, exact_rounded, unused;
    reference(av, bv, false, exact, unused);
    reference(av, bv, true, exact_rounded, magnitude);
    const auto& torch_c =
        golden["c_" + std::to_string(m) + "_" + std::to_string(k) + "_" + std::to_string(n)];
    // torch's result is bfloat16: its error includes rounding the output, which at a few
    // elements happens to land nearer the exact value than float32 sums of the rounded operands
    // do. So the sum of squared errors must be no larger, the largest error within 2% of torch's.
    double torch_max = 0, torch_squares = 0;
    for (size_t i = 0; i < exact.size(); ++i) {
      const double e = torch_c.values[i] - exact[i];
      torch_max = worse(torch_max, std::abs(e));
      torch_squares += e * e;
    }
    for (const auto engine : engines()) {
      INFO("[" << m << ", " << k << "]·[" << k << ", " << n << "] on " << engine_name(engine));
      EngineScope scope(engine);
      std::vector<float> c(static_cast<size_t>(m * n));
      {
        MatmulPrecisionGuard bf16(MatmulPrecision::BFloat16);
        gemm(matrix(c.data(), m, n), av, bv);
      }
      double error = 0, squares = 0, error_rounded = 0, excess = 0, off_torch = 0;
      for (size_t i = 0; i < c.size(); ++i) {
        error = worse(error, std::abs(c[i] - exact[i]));
        squares += (c[i] - exact[i]) * (c[i] - exact[i]);
        // torch's bfloat16 result is ours rounded: within one bfloat16 unit (2^-8 relative)
        off_torch = worse(off_torch, std::abs(c[i] - torch_c.values[i]) -
                                         0x1p-8 * std::abs(torch_c.values[i]) - 1e-6);
        error_rounded = std::abs(c[i] - exact_rounded[i]);
        // float32 summation of k exact products: |error| <= k·u·Σ|a·b| (u = 2^-24), with margin
        excess =
            worse(excess, error_rounded - 1.01 * static_cast<double>(k) * 0x1p-24 * magnitude[i]);
      }
      INFO("max error " << error << ", torch's " << torch_max << "; squared " << squares
                        << ", torch's " << torch_squares);
      CHECK(squares <= torch_squares);
      CHECK(error <= 1.02 * torch_max);
      CHECK(off_torch <= 0);
      CHECK(excess <= 0);
      // And the operands were rounded: the float32 product differs.
      std::vector<float> c32(c.size());
      gemm(matrix(c32.data(), m, n), av, bv);
      CHECK(c32 != c);
    }
  }
}

TEST_CASE("bf16 products: transposes, strides, alpha, accumulation and threads", "[gemm][bf16]") {
  if (!bf16_here()) return;
  std::mt19937 rng(28);
  // tiny, matrix-vector, small kernel, blocked, large enough for oneDNN under auto, and past
  // each of the own kernel's blocks: rows (256), k (768, twice, odd), columns (3072)
  for (const auto& [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{3, 5, 4},
                                {1, 70, 33},
                                {40, 50, 1},
                                {64, 64, 64},
                                {37, 129, 51},
                                {96, 160, 80},
                                {300, 40, 20},
                                {9, 1601, 50},
                                {3, 20, 3200}}) {
    for (const auto engine : engines()) {
      for (int threads : {1, 2}) {
        for (int mode = 0; mode < 16; ++mode) {
          const bool ta = mode & 1, tb = mode & 2, accumulate = mode & 4;
          const double alpha = mode & 8 ? 0.5 : 1.0;
          INFO("[" << m << ", " << k << "]·[" << k << ", " << n << "] on " << engine_name(engine)
                   << ", threads " << threads << ", ta " << ta << ", tb " << tb << ", accumulate "
                   << accumulate << ", alpha " << alpha);
          // Stored with 3 spare columns per row, as views into larger tensors are.
          const int64_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 3, ldc = n + 3;
          const std::vector<float> a = uniform(static_cast<size_t>((ta ? k : m) * lda), rng);
          const std::vector<float> b = uniform(static_cast<size_t>((tb ? n : k) * ldb), rng);
          std::vector<float> c = uniform(static_cast<size_t>(m * ldc), rng);
          const std::vector<float> c0 = c;
          const MatrixView<const float> av =
              ta ? matrix(a.data(), k, m, lda).t() : matrix(a.data(), m, k, lda);
          const MatrixView<const float> bv =
              tb ? matrix(b.data(), n, k, ldb).t() : matrix(b.data(), k, n, ldb);
          EngineScope scope(engine);
          set_num_threads(threads);
          {
            MatmulPrecisionGuard bf16(MatmulPrecision::BFloat16);
            gemm(matrix(c.data(), m, n, ldc), av, bv, {.alpha = alpha, .accumulate = accumulate});
          }
          set_num_threads(1);
          std::vector<double> want, magnitude;
          reference(av, bv, true, want, magnitude);
          double excess = 0;
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              const size_t r = static_cast<size_t>(i * n + j), s = static_cast<size_t>(i * ldc + j);
              const double base = accumulate ? c0[s] : 0.0;
              const double bound = 1.01 * static_cast<double>(k + 2) * 0x1p-24 *
                                   (alpha * magnitude[r] + std::abs(base));
              excess = worse(excess, std::abs(c[s] - (base + alpha * want[r])) - bound);
            }
            for (int64_t j = n; j < ldc; ++j) {  // the spare columns are never written
              const size_t s = static_cast<size_t>(i * ldc + j);
              REQUIRE(c[s] == c0[s]);
            }
          }
          CHECK(excess <= 0);
        }
      }
    }
  }
}

TEST_CASE("bf16 products: bit-identical run to run", "[gemm][bf16]") {
  if (!bf16_here()) return;
  std::mt19937 rng(7);
  const int64_t m = 128, k = 256, n = 96;
  const std::vector<float> a = uniform(static_cast<size_t>(m * k), rng);
  const std::vector<float> b = uniform(static_cast<size_t>(k * n), rng);
  MatmulPrecisionGuard bf16(MatmulPrecision::BFloat16);
  for (const auto engine : engines()) {
    EngineScope scope(engine);
    std::vector<float> c1(static_cast<size_t>(m * n)), c2(c1.size());
    gemm(matrix(c1.data(), m, n), matrix(a.data(), m, k), matrix(b.data(), k, n));
    gemm(matrix(c2.data(), m, n), matrix(a.data(), m, k), matrix(b.data(), k, n));
    CHECK(c1 == c2);
  }
}

TEST_CASE("bf16 products: the own kernel gives the same bits at 1 and 2 threads", "[gemm][bf16]") {
  if (!bf16_here()) return;
  std::mt19937 rng(11);
  // C split by rows (m >= n) and by columns
  for (const auto& [m, k, n] :
       {std::tuple<int64_t, int64_t, int64_t>{300, 90, 100}, {70, 130, 500}}) {
    const std::vector<float> a = uniform(static_cast<size_t>(m * k), rng);
    const std::vector<float> b = uniform(static_cast<size_t>(k * n), rng);
    MatmulPrecisionGuard bf16(MatmulPrecision::BFloat16);
    EngineScope scope(detail::Bf16Engine::Tapegrad);
    std::vector<float> one(static_cast<size_t>(m * n)), two(one.size());
    gemm(matrix(one.data(), m, n), matrix(a.data(), m, k), matrix(b.data(), n, k).t());
    set_num_threads(2);
    gemm(matrix(two.data(), m, n), matrix(a.data(), m, k), matrix(b.data(), n, k).t());
    set_num_threads(1);
    CHECK(one == two);
  }
}

TEST_CASE("bf16 products: NaN and infinity reach C as in float32", "[gemm][bf16]") {
  if (!bf16_here()) return;
  const int64_t m = 9, k = 33, n = 50;
  std::vector<float> a(static_cast<size_t>(m * k), 0.5f), b(static_cast<size_t>(k * n), 0.25f);
  a[2 * k + 7] = std::numeric_limits<float>::quiet_NaN();   // row 2 of C
  b[11 * n + 40] = std::numeric_limits<float>::infinity();  // column 40 of C
  for (const auto engine : engines()) {
    INFO("on " << engine_name(engine));
    EngineScope scope(engine);
    MatmulPrecisionGuard bf16(MatmulPrecision::BFloat16);
    std::vector<float> c(static_cast<size_t>(m * n));
    gemm(matrix(c.data(), m, n), matrix(a.data(), m, k), matrix(b.data(), k, n));
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const float x = c[static_cast<size_t>(i * n + j)];
        INFO("C[" << i << ", " << j << "] = " << x);
        if (i == 2) {
          CHECK(std::isnan(x));
        } else if (j == 40) {
          CHECK(x == std::numeric_limits<float>::infinity());
        } else {
          CHECK(x == 0.5f * 0.25f * static_cast<float>(k));
        }
      }
    }
  }
}

TEST_CASE("bf16 products: float64 products are never rounded", "[gemm][bf16]") {
  std::mt19937 rng(64);
  std::uniform_real_distribution<double> u(-1, 1);
  const int64_t m = 40, k = 70, n = 48;
  std::vector<double> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
  for (double& x : a) x = u(rng);
  for (double& x : b) x = u(rng);
  std::vector<double> want(static_cast<size_t>(m * n)), got(want.size());
  gemm(matrix(want.data(), m, n), matrix(a.data(), m, k), matrix(b.data(), k, n));
  MatmulPrecisionGuard bf16(MatmulPrecision::BFloat16);
  gemm(matrix(got.data(), m, n), matrix(a.data(), m, k), matrix(b.data(), k, n));
  CHECK(got == want);
}

TEST_CASE("bf16 products: without AVX512_BF16, one notice and float32 products", "[gemm][bf16]") {
  detail::pretend_no_bf16_for_testing(true);
  // stderr into a file while the precision is set twice.
  std::FILE* capture = std::tmpfile();
  REQUIRE(capture != nullptr);
  std::fflush(stderr);
  const int saved = dup(2);
  REQUIRE(dup2(fileno(capture), 2) == 2);
  set_matmul_precision(MatmulPrecision::BFloat16);
  set_matmul_precision(MatmulPrecision::Highest);
  set_matmul_precision(MatmulPrecision::BFloat16);
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::rewind(capture);
  std::string text;
  for (int ch = std::fgetc(capture); ch != EOF; ch = std::fgetc(capture))
    text += static_cast<char>(ch);
  std::fclose(capture);
  INFO("stderr: " << text);
  size_t notices = 0;
  for (size_t at = text.find("no AVX512_BF16"); at != std::string::npos;
       at = text.find("no AVX512_BF16", at + 1))
    ++notices;
  CHECK(notices == 1);
  CHECK(matmul_precision() == MatmulPrecision::BFloat16);
  CHECK_FALSE(bf16_products());
  std::mt19937 rng(3);
  const int64_t m = 33, k = 65, n = 47;
  const std::vector<float> a = uniform(static_cast<size_t>(m * k), rng);
  const std::vector<float> b = uniform(static_cast<size_t>(k * n), rng);
  std::vector<float> got(static_cast<size_t>(m * n)), want(got.size());
  gemm(matrix(got.data(), m, n), matrix(a.data(), m, k), matrix(b.data(), k, n));
  set_matmul_precision(MatmulPrecision::Highest);
  gemm(matrix(want.data(), m, n), matrix(a.data(), m, k), matrix(b.data(), k, n));
  CHECK(got == want);  // float32, bit for bit
  detail::pretend_no_bf16_for_testing(false);
}

TEST_CASE("MatmulPrecisionGuard restores the previous precision", "[gemm][bf16]") {
  REQUIRE(matmul_precision() == MatmulPrecision::Highest);
  {
    MatmulPrecisionGuard bf16(MatmulPrecision::BFloat16);
    CHECK(matmul_precision() == MatmulPrecision::BFloat16);
    CHECK(bf16_products() == bf16_supported());
    {
      MatmulPrecisionGuard highest(MatmulPrecision::Highest);
      CHECK_FALSE(bf16_products());
    }
    CHECK(matmul_precision() == MatmulPrecision::BFloat16);
  }
  CHECK(matmul_precision() == MatmulPrecision::Highest);
}
