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
#include <limits>
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

using tapegrad::testing::calls_libm;

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
      if (calls_libm(level)) {
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

// vmath::map's functions (the op library's unary ops): the C library's at baseline, bit for bit;
// from avx2 up the exact ones (roundings, |x|, sign, x², √x, x − trunc x) the same bits as the C
// library's, the transcendental ones SLEEF's, equal across the vector levels and within its
// stated bound of the C library's (1 ulp for its u10 functions, erfc's u15 2, plus the C
// library's own error: 2 and 3 here). NaN, ±inf, ±0 and ties of round in the values.
struct MapCase {
  vm::Unary f;
  const char* name;
  double lo, hi;
  bool exact;
  float (*libm_f)(float);
  double (*libm_d)(double);
};

float sign_f(float v) {
  return float(0.0f < v) - float(v < 0.0f);
}
double sign_d(double v) {
  return double(0.0 < v) - double(v < 0.0);
}
float square_f(float v) {
  return v * v;
}
double square_d(double v) {
  return v * v;
}
float frac_f(float v) {
  return v - std::trunc(v);
}
double frac_d(double v) {
  return v - std::trunc(v);
}

std::vector<MapCase> map_cases() {
  using U = vm::Unary;
  using DF = double (*)(double);
  return {
      {U::kAbs, "abs", -5, 5, true, ::fabsf, static_cast<DF>(::fabs)},
      {U::kSign, "sign", -5, 5, true, sign_f, sign_d},
      {U::kSquare, "square", -5, 5, true, square_f, square_d},
      {U::kSqrt, "sqrt", 0, 50, true, ::sqrtf, static_cast<DF>(::sqrt)},
      {U::kFloor, "floor", -5, 5, true, ::floorf, static_cast<DF>(::floor)},
      {U::kCeil, "ceil", -5, 5, true, ::ceilf, static_cast<DF>(::ceil)},
      {U::kRound, "round", -5, 5, true, ::nearbyintf, static_cast<DF>(::nearbyint)},
      {U::kTrunc, "trunc", -5, 5, true, ::truncf, static_cast<DF>(::trunc)},
      {U::kFrac, "frac", -5, 5, true, frac_f, frac_d},
      {U::kExp, "exp", -20, 20, false, ::expf, static_cast<DF>(::exp)},
      {U::kSin, "sin", -10, 10, false, ::sinf, static_cast<DF>(::sin)},
      {U::kCos, "cos", -10, 10, false, ::cosf, static_cast<DF>(::cos)},
      {U::kTan, "tan", -1.5, 1.5, false, ::tanf, static_cast<DF>(::tan)},
      {U::kAsin, "asin", -1, 1, false, ::asinf, static_cast<DF>(::asin)},
      {U::kAcos, "acos", -1, 1, false, ::acosf, static_cast<DF>(::acos)},
      {U::kAtan, "atan", -10, 10, false, ::atanf, static_cast<DF>(::atan)},
      {U::kSinh, "sinh", -10, 10, false, ::sinhf, static_cast<DF>(::sinh)},
      {U::kCosh, "cosh", -10, 10, false, ::coshf, static_cast<DF>(::cosh)},
      {U::kAsinh, "asinh", -10, 10, false, ::asinhf, static_cast<DF>(::asinh)},
      {U::kAcosh, "acosh", 1, 10, false, ::acoshf, static_cast<DF>(::acosh)},
      {U::kAtanh, "atanh", -1, 1, false, ::atanhf, static_cast<DF>(::atanh)},
      {U::kErf, "erf", -4, 4, false, ::erff, static_cast<DF>(::erf)},
      {U::kErfc, "erfc", -4, 9, false, ::erfcf, static_cast<DF>(::erfc)},
      {U::kLog1p, "log1p", -0.9, 10, false, ::log1pf, static_cast<DF>(::log1p)},
      {U::kExpm1, "expm1", -5, 5, false, ::expm1f, static_cast<DF>(::expm1)},
      {U::kExp2, "exp2", -20, 20, false, ::exp2f, static_cast<DF>(::exp2)},
      {U::kLog2, "log2", 1e-3, 100, false, ::log2f, static_cast<DF>(::log2)},
      {U::kLog10, "log10", 1e-3, 100, false, ::log10f, static_cast<DF>(::log10)},
  };
}

template <class T>
bool same_or_both_nan(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0 || (std::isnan(a) && std::isnan(b));
}

template <class T>
void map_levels() {
  for (const MapCase& c : map_cases()) {
    INFO(c.name << (sizeof(T) == 4 ? " float" : " double"));
    std::vector<T> x = values<T>(c.lo, c.hi);
    const auto n_plain = static_cast<int64_t>(x.size());
    const T inf = std::numeric_limits<T>::infinity();
    for (const T special : {T(0), -T(0), inf, -inf, std::numeric_limits<T>::quiet_NaN(), T(2.5),
                            T(-2.5), T(0.5), T(c.lo), T(c.hi)}) {
      x.push_back(special);
    }
    std::vector<T> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      if constexpr (sizeof(T) == 4) {
        want[i] = c.libm_f(x[i]);
      } else {
        want[i] = c.libm_d(x[i]);
      }
    }
    std::vector<T> first_vector;
    for (const CpuCapability level : tapegrad::testing::cpu_levels_here()) {
      INFO("level " << tapegrad::cpu_capability_name(level));
      tapegrad::testing::CpuLevelGuard guard(level);
      std::vector<T> y(x.size());
      vm::map(c.f, x.data(), y.data(), static_cast<int64_t>(x.size()));
      const int64_t bound = c.f == vm::Unary::kErfc ? 3 : 2;
      for (size_t i = 0; i < x.size(); ++i) {
        INFO("x = " << x[i] << ": " << y[i] << ", the C library's " << want[i]);
        if (calls_libm(level) || c.exact) {
          CHECK(same_or_both_nan(y[i], want[i]));
        } else if (std::isnan(want[i]) || std::isinf(want[i])) {
          CHECK(same_or_both_nan(y[i], want[i]));
        } else {
          CHECK(ulps(y[i], want[i]) <= bound);
        }
      }
      if (calls_libm(level)) continue;
      // Across the vector levels on the finite values alone: SLEEF's functions take another path
      // for a whole vector when one lane is out of range (an inf), and the lanes grouped in a
      // vector differ between 8 and 16.
      std::vector<T> plain(static_cast<size_t>(n_plain));
      vm::map(c.f, x.data(), plain.data(), n_plain);
      if (first_vector.empty()) {
        first_vector = plain;
      } else {
        CHECK(same_bits(plain, first_vector));
      }
    }
    // In place (y aliasing x), as the ops' backwards call it.
    std::vector<T> z = x;
    vm::map(c.f, z.data(), z.data(), static_cast<int64_t>(z.size()));
    std::vector<T> y(x.size());
    vm::map(c.f, x.data(), y.data(), static_cast<int64_t>(x.size()));
    CHECK(same_bits(z, y));
  }
}

// torch's floor division of floats (div_floor_floating) as torch writes it, branch by branch.
template <class T>
T torch_floor_divide(T a, T b) {
  if (b == T(0)) return a / b;
  const T mod = std::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != T(0) && (b < T(0)) != (mod < T(0))) div -= T(1);
  if (div == T(0)) return std::copysign(T(0), a / b);
  T floordiv = std::floor(div);
  if (div - floordiv > T(0.5)) floordiv += T(1);
  return floordiv;
}

template <class T>
T torch_remainder(T a, T b) {
  T mod = std::fmod(a, b);
  if (mod != T(0) && (b < T(0)) != (mod < T(0))) mod += b;
  return mod;
}

// Every pair of a grid of values (signs, zeros, infinities, NaN, magnitudes far apart), an odd
// count so that every level has a tail.
template <class T>
void binary_levels() {
  using B = vm::Binary;
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<T> grid = {T(0),    -T(0),   T(1),    T(-1),    T(2.5),  T(-2.5), T(7.25),
                               T(-0.3), T(1e-3), T(-1e6), T(3e7),   T(0.75), inf,     -inf,
                               nan,     T(5),    T(-5),   T(1e-30), T(123.5)};
  std::vector<T> a, b;
  for (const T u : grid) {
    for (const T v : grid) {
      a.push_back(u);
      b.push_back(v);
    }
  }
  a.push_back(T(3));  // one more: 362 pairs
  b.push_back(T(2));
  const auto n = static_cast<int64_t>(a.size());
  struct Case {
    B f;
    const char* name;
    T (*want)(T, T);
    bool exact;
  };
  const Case cases[] = {
      {B::kPow, "pow", [](T u, T v) { return static_cast<T>(std::pow(u, v)); }, false},
      {B::kAtan2, "atan2", [](T u, T v) { return static_cast<T>(std::atan2(u, v)); }, false},
      {B::kFmod, "fmod", [](T u, T v) { return static_cast<T>(std::fmod(u, v)); }, true},
      {B::kRemainder, "remainder", torch_remainder<T>, true},
      {B::kFloorDivide, "floor_divide", torch_floor_divide<T>, true},
  };
  for (const Case& c : cases) {
    INFO(c.name << (sizeof(T) == 4 ? " float" : " double"));
    for (const CpuCapability level : tapegrad::testing::cpu_levels_here()) {
      INFO("level " << tapegrad::cpu_capability_name(level));
      tapegrad::testing::CpuLevelGuard guard(level);
      std::vector<T> y(a.size());
      vm::map(c.f, a.data(), b.data(), y.data(), n);
      for (size_t i = 0; i < a.size(); ++i) {
        const T want = c.want(a[i], b[i]);
        INFO("f(" << a[i] << ", " << b[i] << ") = " << y[i] << ", want " << want);
        if (calls_libm(level) || c.exact || std::isnan(want) || std::isinf(want)) {
          CHECK(same_or_both_nan(y[i], want));
        } else {
          CHECK(ulps(y[i], want) <= 1);
        }
      }
      // In place, as the ops' backwards call it.
      std::vector<T> z = b;
      vm::map(c.f, a.data(), z.data(), z.data(), n);
      CHECK(same_bits(z, y));
    }
  }
}

// Dropout's masked product at each level: the definition's bits (one rounded product, then the
// add), with infinities, NaN and negative values dropped (NaN, NaN, -0), in place too.
template <class T>
void masked_scale_levels() {
  std::vector<T> x = values<T>(-3.0, 3.0);
  x[5] = std::numeric_limits<T>::infinity();
  x[6] = std::numeric_limits<T>::quiet_NaN();
  std::vector<uint8_t> keep(x.size());
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = (i * 7 + i / 3) % 5 < 3 ? 1 : 0;
  keep[5] = keep[6] = 0;
  const std::vector<T> base = values<T>(1.0, 2.0);
  const T scale = T(1) / T(0.7);
  std::vector<T> want(x.size()), want_sum(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    volatile T product = x[i] * (keep[i] != 0 ? scale : T(0));  // rounded on its own
    want[i] = product;
    want_sum[i] = base[i] + product;
  }
  for (const CpuCapability level : tapegrad::testing::cpu_levels_here()) {
    tapegrad::testing::CpuLevelGuard guard(level);
    INFO(tapegrad::cpu_capability_name(level));
    std::vector<T> y(x.size()), sum = base, in_place = x;
    vm::masked_scale(x.data(), keep.data(), scale, y.data(), static_cast<int64_t>(x.size()));
    vm::masked_scale(x.data(), keep.data(), scale, sum.data(), static_cast<int64_t>(x.size()),
                     /*accumulate=*/true);
    vm::masked_scale(in_place.data(), keep.data(), scale, in_place.data(),
                     static_cast<int64_t>(x.size()));
    CHECK(same_bits(y, want));
    CHECK(same_bits(sum, want_sum));
    CHECK(same_bits(in_place, want));
    CHECK(std::isnan(y[5]));
    CHECK(std::isnan(y[6]));
  }
}

// GELU's backward from the forward's saved tanh(u) gives the bits of the backward that computes
// it again, at each level, also in two parts (gelu splits over the threads).
template <class T>
void gelu_saved_tanh_levels() {
  const std::vector<T> x = values<T>(-6.0, 6.0), dy = values<T>(-2.0, 3.0);
  const int64_t n = static_cast<int64_t>(x.size());
  for (const CpuCapability level : tapegrad::testing::cpu_levels_here()) {
    tapegrad::testing::CpuLevelGuard guard(level);
    INFO(tapegrad::cpu_capability_name(level));
    std::vector<T> y(x.size()), y_saving(x.size()), tanh_u(x.size());
    vm::gelu_tanh(x.data(), y.data(), n);
    const int64_t split = n / 3;
    vm::gelu_tanh(x.data(), y_saving.data(), split, tanh_u.data());
    vm::gelu_tanh(x.data() + split, y_saving.data() + split, n - split, tanh_u.data() + split);
    CHECK(same_bits(y_saving, y));
    std::vector<T> dx = values<T>(0.5, 1.0), dx_saved = dx;
    vm::gelu_tanh_backward(x.data(), dy.data(), dx.data(), n);
    vm::gelu_tanh_backward(x.data(), dy.data(), dx_saved.data(), split, tanh_u.data());
    vm::gelu_tanh_backward(x.data() + split, dy.data() + split, dx_saved.data() + split, n - split,
                           tanh_u.data() + split);
    CHECK(same_bits(dx_saved, dx));
    CHECK(dx != values<T>(0.5, 1.0));  // it added something
  }
}

}  // namespace test_vmath_isa

TEST_CASE(
    "vmath: the binary functions, the C library's at baseline, SLEEF's within 1 ulp above, "
    "fmod, remainder and floor_divide exact everywhere",
    "[vmath][isa]") {
  test_vmath_isa::binary_levels<float>();
  test_vmath_isa::binary_levels<double>();
}

TEST_CASE("vmath: each CPU level here gives SLEEF's bits from avx2 up, the C library's at baseline",
          "[vmath][isa]") {
  test_vmath_isa::elementwise_levels<float>();
  test_vmath_isa::elementwise_levels<double>();
}

TEST_CASE("vmath: map's functions are the C library's at baseline, SLEEF's within its bound above",
          "[vmath][isa]") {
  test_vmath_isa::map_levels<float>();
  test_vmath_isa::map_levels<double>();
}

TEST_CASE("vmath: the row kernels agree across the CPU levels here within a few ulps",
          "[vmath][isa]") {
  test_vmath_isa::row_levels<float>();
  test_vmath_isa::row_levels<double>();
}

TEST_CASE("vmath: dropout's masked product gives the definition's bits at each CPU level here",
          "[vmath][isa]") {
  test_vmath_isa::masked_scale_levels<float>();
  test_vmath_isa::masked_scale_levels<double>();
}

TEST_CASE("vmath: GELU's backward from the forward's tanh gives the recomputing backward's bits",
          "[vmath][isa][gelu]") {
  test_vmath_isa::gelu_saved_tanh_levels<float>();
  test_vmath_isa::gelu_saved_tanh_levels<double>();
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
