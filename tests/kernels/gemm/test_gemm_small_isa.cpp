// Tests for the small-product kernel's variants per instruction-set level
// (kernels/gemm/gemm_small_isa.cpp, picked by kernels/cpu/cpu.h's level): at every level this CPU
// has, each element of C against its sum in the kernel's order, bit for bit (fused multiply-adds
// at avx2 and above, rounded products at baseline); the same bits at avx2, avx512 and
// avx512_bf16; at 1 and 2 threads; and TAPEGRAD_CPU_CAPABILITY's values and errors.
#include <tapegrad/kernels/cpu/cpu.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/gemm/gemm.h>
#include <tapegrad/kernels/gemm/gemm_kernels.h>
#include <tapegrad/kernels/gemm/matmul_precision.h>
#include "tests/kernels/fill.h"
#include "tests/kernels/isa_testing.h"

using namespace tapegrad;

namespace {

// The level in use when the test hook is off: TAPEGRAD_CPU_CAPABILITY's, or the CPU's.
CpuCapability small_isa_default_level() {
  const char* env = std::getenv("TAPEGRAD_CPU_CAPABILITY");
  return detail::parse_cpu_capability(env != nullptr ? env : "", cpu_detected_capability())
      .value_or(cpu_detected_capability());
}

// One product's operands: A [m, k] (or its transpose stored [k, m]), B [k, n] (or [n, k]), C
// [m, n] with padded strides, filled irregularly.
template <class T>
struct SmallIsaCase {
  int64_t m, n, k;
  bool ta, tb, accumulate;
  T alpha;
  int64_t lda, ldb, ldc;
  std::vector<T> a, b, c;

  SmallIsaCase(int64_t m_, int64_t n_, int64_t k_, bool ta_, bool tb_, bool acc, T alpha_)
      : m(m_), n(n_), k(k_), ta(ta_), tb(tb_), accumulate(acc), alpha(alpha_) {
    lda = (ta ? m : k) + 3;
    ldb = (tb ? k : n) + 2;
    ldc = n + 5;
    const auto fill = [](size_t size, unsigned seed) {
      // Times 1.1: products of full-width mantissas, so rounding them first changes sums in
      // double too.
      std::vector<T> v;
      for (const float x : testing::irregular_fill(size, seed))
        v.push_back(static_cast<T>(x) * T(1.1));
      return v;
    };
    const unsigned seed = static_cast<unsigned>(m * 131 + n * 17 + k);
    a = fill(static_cast<size_t>((ta ? k : m) * lda), seed);
    b = fill(static_cast<size_t>((tb ? n : k) * ldb), seed + 1);
    c = fill(static_cast<size_t>(m * ldc), seed + 2);
  }
  T at(int64_t i, int64_t p) const {
    return a[static_cast<size_t>(ta ? p * lda + i : i * lda + p)];
  }
  T bt(int64_t p, int64_t j) const {
    return b[static_cast<size_t>(tb ? j * ldb + p : p * ldb + j)];
  }

  // C after gemm, padding included.
  std::vector<T> run() const {
    std::vector<T> out = c;
    const MatrixView<const T> av =
        ta ? matrix<const T>(a.data(), k, m, lda).t() : matrix<const T>(a.data(), m, k, lda);
    const MatrixView<const T> bv =
        tb ? matrix<const T>(b.data(), n, k, ldb).t() : matrix<const T>(b.data(), k, n, ldb);
    gemm<T>(matrix(out.data(), m, n, ldc), av, bv,
            {.alpha = static_cast<double>(alpha), .accumulate = accumulate});
    return out;
  }

  // C as the kernel sums it: from 0 in k order, each product fused into the sum (`fused`) or
  // rounded first; then times alpha (rounded), added to C's value when accumulating.
  std::vector<T> expected(bool fused) const {
    std::vector<T> out = c;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        T s(0);
        for (int64_t p = 0; p < k; ++p) {
          s = fused ? std::fma(at(i, p), bt(p, j), s) : s + detail::unfused(at(i, p) * bt(p, j));
        }
        T& dst = out[static_cast<size_t>(i * ldc + j)];
        dst = accumulate ? dst + detail::unfused(s * alpha) : s * alpha;
      }
    }
    return out;
  }
};

// Shapes the small kernel takes (n a multiple of 16 floats), with m covering full blocks and
// every remainder of 8, 6 and 4 rows, n an odd number of 16-column panels, k short and long.
template <class T>
std::vector<SmallIsaCase<T>> small_isa_cases() {
  std::vector<SmallIsaCase<T>> cases;
  int variant = 0;
  for (const int64_t m : {1, 2, 3, 5, 7, 8, 11, 13, 24, 29, 64}) {
    for (const int64_t n : {16, 48, 64}) {
      for (const int64_t k : {1, 9, 64}) {
        if (!detail::small_gemm_takes<T>(m, n, k) || detail::is_tiny_product(m, n, k)) continue;
        const bool ta = variant % 2 == 1, tb = variant % 3 == 1, acc = variant % 4 >= 2;
        const T alpha = variant % 5 == 0 ? T(1) : T(-0.75);
        cases.emplace_back(m, n, k, ta, tb, acc, alpha);
        ++variant;
      }
    }
  }
  return cases;
}

template <class T>
void check_small_isa_levels() {
  const std::vector<SmallIsaCase<T>> cases = small_isa_cases<T>();
  REQUIRE(cases.size() > 50);
  std::vector<std::vector<T>> at_avx2;
  for (const CpuCapability level : testing::cpu_levels_here()) {
    const testing::CpuLevelGuard guard(level);
    REQUIRE(cpu_capability() == level);
    const bool fused = testing::level_fuses(level);
    size_t differs_from_other_rounding = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      const SmallIsaCase<T>& c = cases[i];
      INFO(cpu_capability_name(level)
           << ": [" << c.m << ", " << c.n << ", " << c.k << "] ta " << c.ta << " tb " << c.tb
           << " accumulate " << c.accumulate << " alpha " << c.alpha);
      const std::vector<T> got = c.run();
      CHECK(got == c.expected(fused));
      if (got != c.expected(!fused)) ++differs_from_other_rounding;
      if (level == CpuCapability::Avx2) at_avx2.push_back(got);
      if (level > CpuCapability::Avx2) CHECK(got == at_avx2[i]);  // AVX-512 blocks, same bits
    }
    // The variant really changed: with and without FMA the bits differ somewhere.
    CHECK(differs_from_other_rounding > 0);
  }
}

}  // namespace

TEST_CASE("small gemm: every CPU level here sums each element in k order, bit for bit",
          "[gemm][cpu]") {
  INFO(cpu_capability_info());
  check_small_isa_levels<float>();
  check_small_isa_levels<double>();
}

TEST_CASE("small gemm: every CPU level here gives the same bits at 1 and 2 threads",
          "[gemm][cpu]") {
  const int saved = num_threads();
  // [512, 64]·[64, 64]: 2^22 flops, split over the threads by rows.
  SmallIsaCase<float> c(512, 64, 64, false, true, true, 0.5f);
  REQUIRE(detail::small_gemm_takes<float>(c.m, c.n, c.k));
  for (const CpuCapability level : testing::cpu_levels_here()) {
    INFO(cpu_capability_name(level));
    const testing::CpuLevelGuard guard(level);
    set_num_threads(1);
    const std::vector<float> one = c.run();
    set_num_threads(2);
    const std::vector<float> two = c.run();
    set_num_threads(saved);
    CHECK(one == two);
    CHECK(one == c.expected(testing::level_fuses(level)));
  }
}

TEST_CASE("cpu: TAPEGRAD_CPU_CAPABILITY's values and errors", "[gemm][cpu]") {
  using detail::parse_cpu_capability;
  CHECK_FALSE(parse_cpu_capability("", CpuCapability::Avx2));
  CHECK(parse_cpu_capability("baseline", CpuCapability::Avx2) == CpuCapability::Baseline);
  CHECK(parse_cpu_capability("avx2", CpuCapability::Avx2) == CpuCapability::Avx2);
  CHECK(parse_cpu_capability("avx512_bf16", CpuCapability::Avx512Bf16) ==
        CpuCapability::Avx512Bf16);
  CHECK(parse_cpu_capability("avx512", CpuCapability::Avx512Bf16) == CpuCapability::Avx512);
  // Above the CPU's level: the variable, the value and the CPU's level.
  CHECK_THROWS_AS(parse_cpu_capability("avx512", CpuCapability::Avx2), Error);
  CHECK_THROWS_WITH(parse_cpu_capability("avx512", CpuCapability::Avx2),
                    "TAPEGRAD_CPU_CAPABILITY=avx512: this CPU's level is avx2; it can only be "
                    "forced lower");
  CHECK_THROWS_WITH(parse_cpu_capability("avx512_bf16", CpuCapability::Avx512),
                    Catch::Contains("TAPEGRAD_CPU_CAPABILITY=avx512_bf16") &&
                        Catch::Contains("level is avx512;"));
  // Unknown values, spellings included.
  for (const char* bad : {"avx3", "AVX2", "native", " avx2", "sse2"}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse_cpu_capability(bad, CpuCapability::Avx512Bf16),
                      "TAPEGRAD_CPU_CAPABILITY=" + std::string(bad) +
                          ": expected baseline, avx2, avx512 or avx512_bf16 (this CPU's level: "
                          "avx512_bf16)");
  }
  for (const CpuCapability level : testing::cpu_levels_here())
    CHECK(parse_cpu_capability(cpu_capability_name(level), cpu_detected_capability()) == level);
}

TEST_CASE("cpu: the test hook forces a level, never above the CPU's", "[gemm][cpu]") {
  const std::string here = cpu_capability_name(cpu_detected_capability());
  {
    const testing::CpuLevelGuard guard(CpuCapability::Baseline);
    CHECK(cpu_capability() == CpuCapability::Baseline);
    CHECK(cpu_capability_info() == "cpu: baseline, forced for testing; this CPU: " + here);
    CHECK_FALSE(bf16_supported());  // AVX512_BF16 goes with the level
  }
  CHECK(cpu_capability() == small_isa_default_level());
  if (small_isa_default_level() == CpuCapability::Avx512Bf16) {
    CHECK(bf16_supported());
  }
  if (cpu_detected_capability() != CpuCapability::Avx512Bf16) {
  } else {
    const auto above = static_cast<CpuCapability>(static_cast<int>(cpu_detected_capability()) + 1);
    CHECK_THROWS_WITH(detail::set_cpu_capability_for_testing(above),
                      Catch::Contains("this CPU's level is " + here));
    CHECK(cpu_capability() == small_isa_default_level());
  }
}

// Hidden: ctest runs it in processes of its own with TAPEGRAD_CPU_CAPABILITY set
// (tests/CMakeLists.txt), since the variable is read once.
TEST_CASE("cpu: the level follows TAPEGRAD_CPU_CAPABILITY", "[.][cpu-env]") {
  const char* env = std::getenv("TAPEGRAD_CPU_CAPABILITY");
  const std::string value = env != nullptr ? env : "";
  INFO("TAPEGRAD_CPU_CAPABILITY=" << value);
  const std::string here = cpu_capability_name(cpu_detected_capability());
  std::vector<float> a(32 * 32, 0.5f), b(32 * 32, 0.25f), c(32 * 32);
  const auto product = [&] {
    gemm<float>(matrix(c.data(), 32, 32), matrix<const float>(a.data(), 32, 32),
                matrix<const float>(b.data(), 32, 32));
  };
  bool known = value.empty();
  for (const CpuCapability level : testing::cpu_levels_here()) {
    if (value != cpu_capability_name(level)) continue;
    known = true;
    CHECK(cpu_capability() == level);
    CHECK(cpu_capability_info() ==
          "cpu: " + value + ", forced by TAPEGRAD_CPU_CAPABILITY; this CPU: " + here);
    CHECK(bf16_supported() == (level == CpuCapability::Avx512Bf16));
  }
  if (value.empty()) {
    CHECK(cpu_capability() == cpu_detected_capability());
    CHECK(cpu_capability_info() == "cpu: " + here + " (this CPU)");
  }
  if (known) {
    product();
    CHECK(c[0] == 4.0f);  // 32 · 0.5 · 0.25
  } else {
    // Unknown or above the CPU's: an Error at every use, the first product included.
    CHECK_THROWS_WITH(cpu_capability(),
                      Catch::Contains("TAPEGRAD_CPU_CAPABILITY=" + value) && Catch::Contains(here));
    CHECK_THROWS_AS(product(), Error);
    CHECK_THROWS_AS(cpu_capability_info(), Error);
  }
}

// Hidden: ctest runs it under `qemu-x86_64 -cpu Haswell` with TAPEGRAD_EXPECT_DETECTED=avx2
// (tests/CMakeLists.txt), to show the detection sees the emulated CPU's level.
// Run without the variable (the sanitizer pass runs a file's hidden cases too), it checks what
// holds anywhere: unforced, the level in use is the detected one.
TEST_CASE("cpu: the detected level is TAPEGRAD_EXPECT_DETECTED's", "[.][cpu-detected]") {
  const char* env = std::getenv("TAPEGRAD_EXPECT_DETECTED");
  if (env != nullptr) CHECK(std::string(cpu_capability_name(cpu_detected_capability())) == env);
  const char* forced = std::getenv("TAPEGRAD_CPU_CAPABILITY");
  if (forced == nullptr || *forced == '\0') CHECK(cpu_capability() == cpu_detected_capability());
}
