// tapegrad-vmath-bench: speed and accuracy of the vectorised exp/tanh/gelu candidates (SLEEF as
// kernels/vmath runs it, SLEEF at AVX2 width as Debian's torch dispatches it, Eigen's packet
// functions, scalar libm), to choose kernels/vmath's implementation by measurement.
// Prints ns per element (best of several passes over a 64K-element, L2-resident array) and the
// max ulp distance to a float64 libm reference rounded to float. Not a test: figures only.
//
//   tapegrad-vmath-bench [elements] [passes]
#include <sleef.h>
#include <Eigen/Core>

#include <immintrin.h>
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <tapegrad/kernels/vmath/vmath.h>

namespace {

using Kernel = std::function<void(const float*, float*, int64_t)>;

int64_t ulps(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) return INT32_MAX;
  const auto ordered = [](float v) {
    const int32_t bits = std::bit_cast<int32_t>(v);
    return static_cast<int64_t>(bits < 0 ? INT32_MIN - bits : bits);
  };
  return std::abs(ordered(a) - ordered(b));
}

double time_ns_per_element(const Kernel& k, const std::vector<float>& x, std::vector<float>& y,
                           int passes) {
  double best = 1e30;
  for (int p = 0; p < passes; ++p) {
    const auto t0 = std::chrono::steady_clock::now();
    k(x.data(), y.data(), static_cast<int64_t>(x.size()));
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  return best / static_cast<double>(x.size());
}

template <class F>
void sleef8(F f, const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) {
    alignas(32) float pad[8] = {x[i]};
    _mm256_store_ps(pad, f(_mm256_load_ps(pad)));
    y[i] = pad[0];
  }
}

#if defined(__AVX512F__)
template <class F>
void sleef16(F f, const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, f(_mm512_loadu_ps(x + i)));
  for (; i < n; ++i) {
    alignas(64) float pad[16] = {x[i]};
    _mm512_store_ps(pad, f(_mm512_load_ps(pad)));
    y[i] = pad[0];
  }
}
#endif

using EigenMap = Eigen::Map<const Eigen::ArrayXf>;
using EigenOut = Eigen::Map<Eigen::ArrayXf>;

void eigen_exp(const float* x, float* y, int64_t n) {
  EigenOut(y, n) = EigenMap(x, n).exp();
}
void eigen_tanh(const float* x, float* y, int64_t n) {
  EigenOut(y, n) = EigenMap(x, n).tanh();
}
void eigen_gelu(const float* x, float* y, int64_t n) {
  const float beta = 0.7978845608028654f, kappa = 0.044715f;
  const auto v = EigenMap(x, n);
  EigenOut(y, n) = 0.5f * v * (1.0f + (beta * (v + kappa * (v * v * v))).tanh());
}
void libm_exp(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}
void libm_tanh(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}
void libm_gelu(const float* x, float* y, int64_t n) {
  const float beta = 0.7978845608028654f, kappa = 0.044715f;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + std::tanh(beta * (v + kappa * (v * v * v))));
  }
}

struct Candidate {
  const char* name;
  Kernel kernel;
};

void run(const char* fn, float lo, float hi, const std::vector<Candidate>& candidates,
         const std::function<double(double)>& reference, int64_t n, int passes,
         double min_abs = 0) {
  std::mt19937 rng(16);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> x(static_cast<size_t>(n)), y(x.size()), first(x.size());
  for (float& v : x) v = dist(rng);
  std::printf("%s over [%g, %g], %lld elements%s:\n", fn, lo, hi, static_cast<long long>(n),
              min_abs > 0 ? " (ulps where |value| >= 0.01: GELU's far negative tail has no "
                            "relative accuracy in float)"
                          : "");
  bool have_first = false;
  for (const Candidate& c : candidates) {
    const double ns = time_ns_per_element(c.kernel, x, y, passes);
    int64_t worst = 0, differ = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double ref = reference(x[i]);
      if (std::abs(ref) >= min_abs) worst = std::max(worst, ulps(y[i], static_cast<float>(ref)));
      if (have_first && std::bit_cast<uint32_t>(y[i]) != std::bit_cast<uint32_t>(first[i])) {
        ++differ;
      }
    }
    if (!have_first) {
      first = y;
      have_first = true;
      std::printf("  %-26s %7.3f ns/element  max %lld ulp from float64 libm\n", c.name, ns,
                  static_cast<long long>(worst));
    } else {
      std::printf(
          "  %-26s %7.3f ns/element  max %lld ulp from float64 libm, %lld elements "
          "differ from %s\n",
          c.name, ns, static_cast<long long>(worst), static_cast<long long>(differ),
          candidates[0].name);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 65536;
  const int passes = argc > 2 ? std::atoi(argv[2]) : 50;
  std::printf("tapegrad-vmath-bench: vmath ISA %s, Eigen SIMD %s\n", tapegrad::vmath::isa(),
              Eigen::SimdInstructionSetsInUse());
  const auto vm_exp = [](const float* x, float* y, int64_t k) { tapegrad::vmath::exp(x, y, k); };
  const auto vm_tanh = [](const float* x, float* y, int64_t k) { tapegrad::vmath::tanh(x, y, k); };
  const auto vm_gelu = [](const float* x, float* y, int64_t k) {
    tapegrad::vmath::gelu_tanh(x, y, k);
  };
  run(
      "exp", -80.0f, 80.0f,
      {
        {"vmath (SLEEF u10)", vm_exp},
            {"SLEEF expf8_u10 (AVX2)",
             [](const float* x, float* y, int64_t k) { sleef8(Sleef_expf8_u10, x, y, k); }},
#if defined(__AVX512F__)
            {"SLEEF expf16_u10 (AVX-512)",
             [](const float* x, float* y, int64_t k) { sleef16(Sleef_expf16_u10, x, y, k); }},
#endif
            {"Eigen exp", eigen_exp}, {
          "libm expf", libm_exp
        }
      },
      [](double v) { return std::exp(v); }, n, passes);
  run(
      "tanh", -10.0f, 10.0f,
      {
        {"vmath (SLEEF u10)", vm_tanh},
            {"SLEEF tanhf8_u10 (AVX2)",
             [](const float* x, float* y, int64_t k) { sleef8(Sleef_tanhf8_u10, x, y, k); }},
#if defined(__AVX512F__)
            {"SLEEF tanhf16_u10 (AVX-512)",
             [](const float* x, float* y, int64_t k) { sleef16(Sleef_tanhf16_u10, x, y, k); }},
#endif
            {"Eigen tanh", eigen_tanh}, {
          "libm tanhf", libm_tanh
        }
      },
      [](double v) { return std::tanh(v); }, n, passes);
  run(
      "gelu (tanh approximation)", -8.0f, 8.0f,
      {{"vmath gelu_tanh", vm_gelu}, {"Eigen (tanh)", eigen_gelu}, {"libm tanhf loop", libm_gelu}},
      [](double v) {
        return 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
      },
      n, passes, 0.01);
  return 0;
}
