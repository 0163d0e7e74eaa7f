// vmath's variants per CPU level (kernels/vmath/vmath_isa.cpp): at every level this CPU has, the
// elementwise kernels give the same bits at avx2 and above (SLEEF's 8- and 16-lane functions
// agree bit for bit, as in torch's AVX2 and AVX512 kernels), the C library's at baseline (torch's
// DEFAULT kernels'); the row kernels, whose sums run over the level's lanes, agree within a few
// ulps; and vmath::isa() names the level in use.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/vmath/vmath.h>
#include "tests/kernels/isa_testing.h"

namespace test_vmath_isa {

using tapegrad::CpuCapability;
namespace vm = tapegrad::vmath;

// n values over [lo, hi], irregular, with a tail past any vector width (n = 203).
template <class T>
std::vector<T> values(double lo, double hi) {
  std::vector<T> v(203);
  for (size_t i = 0; i < v.size(); ++i) {
    const double u = 0.5 + 0.5 * std::sin(1.7 * static_cast<double>(i) + 0.3);
    v[i] = static_cast<T>(lo + (hi - lo) * u);
  }
  return v;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class T>
int64_t ulps(T a, T b) {
  using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  const auto ordered = [](T v) {
    const I bits = std::bit_cast<I>(v);
    return static_cast<int64_t>(bits < 0 ? std::numeric_limits<I>::min() - bits : bits);
  };
  const int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

template <class T>
int64_t max_ulps(const std::vector<T>& a, const std::vector<T>& b) {
  int64_t worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, ulps(a[i], b[i]));
  return worst;
}

struct Elementwise {
  std::string name;
  double lo, hi;
  std::function<void(const float*, float*, int64_t)> f;
  std::function<void(const double*, double*, int64_t)> d;
  float (*libm_f)(float);    // the C library's function (baseline), or null
  double (*libm_d)(double);  // idem
};

std::vector<Elementwise> elementwise() {
  using F = const float*;
  using D = const double*;
  return {
      {"exp", -20, 20, [](F x, float* y, int64_t n) { vm::exp(x, y, n); },
       [](D x, double* y, int64_t n) { vm::exp(x, y, n); }, ::expf,
       static_cast<double (*)(double)>(::exp)},
      {"expm1", -5, 5, [](F x, float* y, int64_t n) { vm::expm1(x, y, n); },
       [](D x, double* y, int64_t n) { vm::expm1(x, y, n); }, ::expm1f,
       static_cast<double (*)(double)>(::expm1)},
      {"log", 1e-3, 100, [](F x, float* y, int64_t n) { vm::log(x, y, n); },
       [](D x, double* y, int64_t n) { vm::log(x, y, n); }, ::logf,
       static_cast<double (*)(double)>(::log)},
      {"tanh", -6, 6, [](F x, float* y, int64_t n) { vm::tanh(x, y, n); },
       [](D x, double* y, int64_t n) { vm::tanh(x, y, n); }, ::tanhf,
       static_cast<double (*)(double)>(::tanh)},
      {"sin", -10, 10, [](F x, float* y, int64_t n) { vm::sin(x, y, n); },
       [](D x, double* y, int64_t n) { vm::sin(x, y, n); }, ::sinf,
       static_cast<double (*)(double)>(::sin)},
      {"cos", -10, 10, [](F x, float* y, int64_t n) { vm::cos(x, y, n); },
       [](D x, double* y, int64_t n) { vm::cos(x, y, n); }, ::cosf,
       static_cast<double (*)(double)>(::cos)},
      {"sigmoid", -12, 12, [](F x, float* y, int64_t n) { vm::sigmoid(x, y, n); },
       [](D x, double* y, int64_t n) { vm::sigmoid(x, y, n); }, nullptr, nullptr},
      {"gelu_tanh", -6, 6, [](F x, float* y, int64_t n) { vm::gelu_tanh(x, y, n); },
       [](D x, double* y, int64_t n) { vm::gelu_tanh(x, y, n); }, nullptr, nullptr},
      {"pow_base", -8, 8, [](F x, float* y, int64_t n) { vm::pow_base(1.7f, x, y, n); }, nullptr,
       nullptr, nullptr},
  };
}

template <class T>
void run(const Elementwise& e, const std::vector<T>& x, std::vector<T>& y) {
  y.assign(x.size(), T(0));
  if constexpr (sizeof(T) == 4) {
    e.f(x.data(), y.data(), static_cast<int64_t>(x.size()));
  } else {
    e.d(x.data(), y.data(), static_cast<int64_t>(x.size()));
  }
}

template <class T>
void elementwise_levels() {
  for (const Elementwise& e : elementwise()) {
    if constexpr (sizeof(T) == 8) {
      if (!e.d) continue;
    }
    INFO(e.name << (sizeof(T) == 4 ? " float" : " double"));
    const std::vector<T> x = values<T>(e.lo, e.hi);
    std::vector<T> first_vector;  // the first level with SLEEF's vector functions
    for (const CpuCapability level : tapegrad::testing::cpu_levels_here()) {
      INFO("level " << tapegrad::cpu_capability_name(level));
      tapegrad::testing::CpuLevelGuard guard(level);
      std::vector<T> y;
      run(e, x, y);
      if (level == CpuCapability::Baseline) {
        const auto libm = [&] {
          if constexpr (sizeof(T) == 4) {
            return e.libm_f;
          } else {
            return e.libm_d;
          }
        }();
        if (libm == nullptr) continue;
        std::vector<T> want(x.size());
        for (size_t i = 0; i < x.size(); ++i) want[i] = libm(x[i]);
        CHECK(same_bits(y, want));
      } else if (first_vector.empty()) {
        first_vector = y;
      } else {
        CHECK(same_bits(y, first_vector));
      }
    }
  }
}

// The row kernels at each level against the first level's (baseline): within a few ulps, the row
// sums running over each level's lanes.
template <class T>
void row_levels() {
  const int64_t rows = 3, cols = 45;
  std::vector<T> x = values<T>(-4, 4);
  x.resize(static_cast<size_t>(rows * cols));
  std::vector<T> sm0, lse0, ln0;
  for (const CpuCapability level : tapegrad::testing::cpu_levels_here()) {
    INFO("level " << tapegrad::cpu_capability_name(level));
    tapegrad::testing::CpuLevelGuard guard(level);
    std::vector<T> sm(x.size()), lse(rows), ln(x.size()), mean(rows), rstd(rows);
    vm::softmax_rows(x.data(), sm.data(), rows, cols);
    vm::logsumexp_rows(x.data(), lse.data(), rows, cols);
    vm::layer_norm_rows(x.data(), nullptr, nullptr, ln.data(), mean.data(), rstd.data(), rows, cols,
                        1e-5);
    if (sm0.empty()) {
      sm0 = sm, lse0 = lse, ln0 = ln;
      continue;
    }
    CHECK(max_ulps(sm, sm0) <= 8);
    CHECK(max_ulps(lse, lse0) <= 8);
    // layer_norm's outputs cross zero, where ulps mean nothing: within a few ulps of 1 (its
    // outputs' scale) instead.
    const double tol = sizeof(T) == 4 ? 1e-6 : 1e-14;
    for (size_t i = 0; i < ln.size(); ++i) CHECK(std::abs(double(ln[i]) - double(ln0[i])) <= tol);
  }
}

}  // namespace test_vmath_isa

TEST_CASE("vmath: each CPU level here gives SLEEF's bits from avx2 up, the C library's at baseline",
          "[vmath][isa]") {
  test_vmath_isa::elementwise_levels<float>();
  test_vmath_isa::elementwise_levels<double>();
}

TEST_CASE("vmath: the row kernels agree across the CPU levels here within a few ulps",
          "[vmath][isa]") {
  test_vmath_isa::row_levels<float>();
  test_vmath_isa::row_levels<double>();
}

TEST_CASE("vmath: isa() names the CPU level in use", "[vmath][isa]") {
  for (const tapegrad::CpuCapability level : tapegrad::testing::cpu_levels_here()) {
    tapegrad::testing::CpuLevelGuard guard(level);
    const std::string want = level == tapegrad::CpuCapability::Baseline ? "baseline"
                             : level == tapegrad::CpuCapability::Avx2   ? "avx2"
                                                                        : "avx512";
    CHECK(tapegrad::vmath::isa() == want);
  }
}
