// kernels/vmath: distance to torch (tests/goldens/vmath, made by make_vmath_goldens.py) and to
// libm, in ulps, printed per kernel and bounded.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <tapegrad/kernels/vmath/vmath.h>
#include "tests/compare.h"
#include "tests/goldens.h"
#include "tests/kernels/isa_testing.h"

namespace {

// The torch values of tests/goldens/vmath/vmath_goldens.txt, by name.
template <class T>
std::vector<T> golden(const std::string& name) {
  const auto& values = tapegrad::testing::golden_file("vmath/vmath_goldens.txt")[name].values;
  return std::vector<T>(values.begin(), values.end());
}

// Distance in representable values between a and b (0: equal; NaN vs NaN: 0).
template <class T>
uint64_t ulps(T a, T b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) return UINT64_MAX;
  using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  const auto ordered = [](T v) {
    const I bits = std::bit_cast<I>(v);
    return static_cast<int64_t>(bits < 0 ? std::numeric_limits<I>::min() - bits : bits);
  };
  const int64_t d = ordered(a) - ordered(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

template <class T>
uint64_t max_ulps(const std::vector<T>& a, const std::vector<T>& b) {
  REQUIRE(a.size() == b.size());
  uint64_t worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, ulps(a[i], b[i]));
  return worst;
}

template <class T>
const char* tag() {
  return sizeof(T) == 4 ? "f32" : "f64";
}

void report(const std::string& what, uint64_t vs_torch, int64_t vs_libm) {
  std::cout << "vmath (" << tapegrad::vmath::isa() << ") " << what << ": max " << vs_torch
            << " ulp from torch";
  if (vs_libm >= 0) std::cout << ", " << vs_libm << " ulp from libm";
  std::cout << "\n";
}

template <class T, class Kernel, class Libm>
void check_elementwise(const std::string& name, Kernel kernel, Libm libm, uint64_t bound) {
  const std::string key = name + "." + tag<T>();
  const std::vector<T> x = golden<T>(key + ".x"), want = golden<T>(key);
  std::vector<T> got(x.size()), ref(x.size());
  kernel(x.data(), got.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) ref[i] = libm(x[i]);
  const uint64_t vs_torch = max_ulps(got, want), vs_libm = max_ulps(got, ref);
  report(key, vs_torch, static_cast<int64_t>(vs_libm));
  CHECK(vs_torch <= bound);
  CHECK(vs_libm <= bound);
}

template <class T>
void elementwise_cases() {
  namespace vm = tapegrad::vmath;
  check_elementwise<T>(
      "exp", [](const T* x, T* y, int64_t n) { vm::exp(x, y, n); }, [](T v) { return std::exp(v); },
      1);
  check_elementwise<T>(
      "expm1", [](const T* x, T* y, int64_t n) { vm::expm1(x, y, n); },
      [](T v) { return std::expm1(v); }, 1);
  check_elementwise<T>(
      "log", [](const T* x, T* y, int64_t n) { vm::log(x, y, n); }, [](T v) { return std::log(v); },
      1);
  check_elementwise<T>(
      "tanh", [](const T* x, T* y, int64_t n) { vm::tanh(x, y, n); },
      [](T v) { return std::tanh(v); }, 1);
  check_elementwise<T>(
      "sigmoid", [](const T* x, T* y, int64_t n) { vm::sigmoid(x, y, n); },
      [](T v) { return T(1) / (T(1) + std::exp(-v)); }, 2);
  // GELU near its zero crossing at large negative x loses relative accuracy in any order of
  // operations, so against libm it is bounded in ulps of the largest output (an absolute bound);
  // against torch it is bit-identical (checked by the ulp figures being bounded too).
  const std::string key = std::string("gelu.") + tag<T>();
  const std::vector<T> x = golden<T>(key + ".x"), want = golden<T>(key),
                       dy = golden<T>(key + ".dy");
  const std::vector<T> want_dx = golden<T>(std::string("gelu_backward.") + tag<T>());
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<T> got(x.size()), dx(x.size(), T(0)), ref(x.size()), ref_dx(x.size());
  vm::gelu_tanh(x.data(), got.data(), n);
  vm::gelu_tanh_backward(x.data(), dy.data(), dx.data(), n);
  const T beta = static_cast<T>(0.7978845608028654), kappa = static_cast<T>(0.044715);
  for (size_t i = 0; i < x.size(); ++i) {  // the same formula with libm's tanh
    const T v = x[i], v2 = v * v, th = std::tanh(beta * (v + kappa * (v2 * v)));
    ref[i] = T(0.5) * v * (T(1) + th);
    const T right = T(0.5) * v * (T(1) - th * th) * (beta * (T(1) + T(3) * kappa * v2));
    ref_dx[i] = dy[i] * (T(0.5) * (T(1) + th) + right);
  }
  const auto max_abs = [](const std::vector<T>& a, const std::vector<T>& b) {
    double worst = 0, scale = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      worst = tapegrad::testing::worse(worst, std::abs(static_cast<double>(a[i]) - b[i]));
      scale = std::max(scale, std::abs(static_cast<double>(b[i])));
    }
    return worst / (scale * std::numeric_limits<T>::epsilon());  // in ulps of the largest value
  };
  std::cout << "vmath (" << vm::isa() << ") " << key << ": max " << max_ulps(got, want)
            << " ulp from torch (" << max_abs(got, want) << " ulp of the largest), "
            << max_abs(got, ref)
            << " ulp of the largest from libm's tanh; backward: " << max_ulps(dx, want_dx)
            << " ulp from torch (" << max_abs(dx, want_dx) << " of the largest), "
            << max_abs(dx, ref_dx) << " ulp of the largest from libm's tanh\n";
  // torch's goldens are its AVX2 kernel's (SLEEF's tanh); a level calling the C library's tanh is
  // held to the libm formula below and to torch's values within 4 ulps of the largest.
  if (tapegrad::testing::active_level_calls_libm()) {
    CHECK(max_abs(got, want) <= 4);
    CHECK(max_abs(dx, want_dx) <= 16);
  } else {
    CHECK(max_ulps(got, want) <= 1);
    CHECK(max_ulps(dx, want_dx) <= 1);
  }
  CHECK(max_abs(got, ref) <= 4);
  CHECK(max_abs(dx, ref_dx) <= 16);
}

// Relative distance, max over the elements, |a − b| / max(|b|, tiny).
template <class T>
double max_rel(const std::vector<T>& a, const std::vector<T>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::abs(static_cast<double>(a[i]) - b[i]);
    worst =
        tapegrad::testing::worse(worst, d / std::max(std::abs(static_cast<double>(b[i])), 1e-30));
  }
  return worst;
}

template <class T>
void row_cases() {
  namespace vm = tapegrad::vmath;
  constexpr int64_t kRows = 6, kCols = 77;  // make_vmath_goldens.py's ROWS, COLS
  const double tol = sizeof(T) == 4 ? 1e-5 : 1e-12;
  const std::string t = tag<T>();
  const std::vector<T> x = golden<T>("rows." + t + ".x");
  std::vector<T> y(x.size()), lse(kRows), ls(x.size());
  vm::softmax_rows(x.data(), y.data(), kRows, kCols);
  vm::logsumexp_rows(x.data(), lse.data(), kRows, kCols);
  vm::log_softmax_rows(x.data(), lse.data(), ls.data(), kRows, kCols);
  const auto sm = golden<T>("softmax." + t), l = golden<T>("logsumexp." + t),
             lsm = golden<T>("log_softmax." + t);
  std::cout << "vmath (" << vm::isa() << ") rows " << t << ": softmax " << max_ulps(y, sm)
            << " ulp from torch, logsumexp " << max_ulps(lse, l) << ", log_softmax "
            << max_ulps(ls, lsm) << "\n";
  CHECK(max_rel(y, sm) <= tol);
  CHECK(max_rel(lse, l) <= tol);
  CHECK(max_rel(ls, lsm) <= tol);

  const std::vector<T> lx = golden<T>("layer_norm." + t + ".x"),
                       w = golden<T>("layer_norm." + t + ".w"),
                       b = golden<T>("layer_norm." + t + ".b"),
                       dy = golden<T>("layer_norm." + t + ".dy");
  std::vector<T> ly(lx.size()), mean(kRows), rstd(kRows), dx(lx.size(), T(0)), dw(kCols, T(0)),
      db(kCols, T(0));
  vm::layer_norm_rows(lx.data(), w.data(), b.data(), ly.data(), mean.data(), rstd.data(), kRows,
                      kCols, 1e-5);
  vm::layer_norm_rows_backward(lx.data(), w.data(), mean.data(), rstd.data(), dy.data(), dx.data(),
                               dw.data(), db.data(), kRows, kCols);
  const auto want_y = golden<T>("layer_norm." + t), want_dx = golden<T>("layer_norm." + t + ".dx"),
             want_dw = golden<T>("layer_norm." + t + ".dw"),
             want_db = golden<T>("layer_norm." + t + ".db");
  std::cout << "vmath (" << vm::isa() << ") layer_norm " << t << ": y " << max_ulps(ly, want_y)
            << " ulp from torch, dx " << max_ulps(dx, want_dx) << ", dw " << max_ulps(dw, want_dw)
            << ", db " << max_ulps(db, want_db) << "\n";
  // dx is a difference of nearly equal terms: bounded relative to the row's largest gradient.
  double worst_dx = 0, scale_dx = 0;
  for (size_t i = 0; i < dx.size(); ++i) {
    worst_dx =
        tapegrad::testing::worse(worst_dx, std::abs(static_cast<double>(dx[i]) - want_dx[i]));
    scale_dx = std::max(scale_dx, std::abs(static_cast<double>(want_dx[i])));
  }
  CHECK(max_rel(ly, want_y) <= 10 * tol);
  CHECK(worst_dx <= tol * scale_dx);
  CHECK(max_rel(dw, want_dw) <= 10 * tol);
  CHECK(max_rel(db, want_db) <= tol);
}

// vmath::sum against torch.sum's bits, at every level here, on make_vmath_goldens.py's inputs
// (its formula: k / 1009 in double, times a power of two, rounded to T); then -0, NaN and inf.
template <class T>
void sum_cases() {
  const std::vector<int64_t> sizes{0,    1,    2,    3,    4,    5,    7,     8,    9,   12,
                                   15,   16,   17,   31,   32,   33,   63,    64,   65,  100,
                                   127,  128,  129,  255,  256,  257,  511,   512,  513, 1000,
                                   4095, 4096, 4097, 8191, 8192, 8193, 20000, 65537};
  const std::vector<T> want = golden<T>(sizeof(T) == 4 ? "sum.f32" : "sum.f64");
  REQUIRE(want.size() == sizes.size());
  for (const tapegrad::CpuCapability level : tapegrad::testing::cpu_levels_here()) {
    tapegrad::testing::CpuLevelGuard guard(level);
    for (size_t c = 0; c < sizes.size(); ++c) {
      std::vector<T> x(static_cast<size_t>(sizes[c]));
      for (int64_t i = 0; i < sizes[c]; ++i) {
        const double k = static_cast<double>((i * 7919) % 1009 - 504);
        x[static_cast<size_t>(i)] =
            static_cast<T>(k / 1009.0 * std::ldexp(1.0, static_cast<int>(i % 13) - 6));
      }
      INFO(tapegrad::cpu_capability_name(level) << ", n " << sizes[c]);
      CHECK(std::bit_cast<std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>(
                tapegrad::vmath::sum(x.data(), sizes[c])) ==
            std::bit_cast<std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>(want[c]));
    }
    const T neg_zero[] = {T(-0.0)};
    CHECK(!std::signbit(tapegrad::vmath::sum(neg_zero, 1)));  // torch: 0 + (-0)
    const T specials[] = {
        T(1), std::numeric_limits<T>::infinity(), T(2), T(3), T(4), T(5), T(6), T(7),
        T(8), -std::numeric_limits<T>::infinity()};
    CHECK(std::isnan(tapegrad::vmath::sum(specials, 10)));
    CHECK(tapegrad::vmath::sum(specials, 9) == std::numeric_limits<T>::infinity());
    const T with_nan[] = {T(1), T(2), std::numeric_limits<T>::quiet_NaN()};
    CHECK(std::isnan(tapegrad::vmath::sum(with_nan, 3)));
  }
}

}  // namespace

TEST_CASE("vmath elementwise kernels are within an ulp or two of torch and libm", "[vmath]") {
  elementwise_cases<float>();
  elementwise_cases<double>();
}

TEST_CASE("vmath row kernels match torch's softmax, logsumexp and layer_norm", "[vmath]") {
  row_cases<float>();
  row_cases<double>();
}

TEST_CASE("vmath::sum gives torch.sum's bits at every CPU level here", "[vmath][isa]") {
  sum_cases<float>();
  sum_cases<double>();
}

TEST_CASE("vmath kernels handle empty arrays, aliasing and special values", "[vmath]") {
  namespace vm = tapegrad::vmath;
  vm::exp(static_cast<const float*>(nullptr), static_cast<float*>(nullptr), 0);
  std::vector<float> v{0.0f, -INFINITY, INFINITY, NAN, 1.0f};
  vm::exp(v.data(), v.data(), static_cast<int64_t>(v.size()));  // in place
  CHECK(v[0] == 1.0f);
  CHECK(v[1] == 0.0f);
  CHECK(v[2] == INFINITY);
  CHECK(std::isnan(v[3]));
  CHECK(v[4] == std::exp(1.0f));
  std::vector<double> row{-INFINITY, 0.0, 1.0};
  double lse = 0;
  vm::logsumexp_rows(row.data(), &lse, 1, 3);
  CHECK(lse == Approx(std::log(1.0 + std::exp(1.0))));
  std::vector<double> nan_row{1.0, NAN, 2.0};
  vm::softmax_rows(nan_row.data(), nan_row.data(), 1, 3);
  CHECK(std::isnan(nan_row[0]));
  std::vector<float> t{-100.0f, 100.0f};
  vm::tanh(t.data(), t.data(), 2);
  CHECK(t[0] == -1.0f);
  CHECK(t[1] == 1.0f);
}
