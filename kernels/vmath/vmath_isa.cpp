// vmath's kernels (kernels/vmath/vmath.h), built once per instruction-set level from this one
// file (TAPEGRAD_ISA_LEVEL, kernels/cpu/isa_level.h): SLEEF's vector functions at AVX2 and
// AVX-512, the C library's at baseline, as torch 1.13 calls them at each level, and plain loops
// (which the compiler vectorises for the level) for the arithmetic around them. No standard
// header: see kernels/cpu/isa_level.h.
#include <cstdint>

#include <tapegrad/kernels/cpu/isa_level.h>
#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/kernels/vmath/vmath_isa.h>

#if TAPEGRAD_ISA_LEVEL >= 1
#include <immintrin.h>
#include <sleef.h>
#endif

#define TAPEGRAD_VMATH_NAMESPACE TAPEGRAD_ISA_NAMESPACE(vmath)

namespace tapegrad::vmath::levels::TAPEGRAD_VMATH_NAMESPACE {
namespace {

enum class Fn { kExp, kExpm1, kLog, kTanh, kCos, kSin };

// The work goes in chunks through stack buffers, so the SLEEF pass and the arithmetic passes
// around it stay in L1.
constexpr int64_t kChunk = 256;

// kLanes: the width the transcendental functions are called at; kSumLanes: the lanes of the
// row sums (a vector's at AVX2 and AVX-512; at baseline torch's 32-byte Vectorized, which the
// compiler maps to two SSE registers).
#if TAPEGRAD_ISA_LEVEL == 2
constexpr int kFloatLanes = 16, kDoubleLanes = 8;
constexpr int kFloatSumLanes = 16, kDoubleSumLanes = 8;
#elif TAPEGRAD_ISA_LEVEL == 1
constexpr int kFloatLanes = 8, kDoubleLanes = 4;
constexpr int kFloatSumLanes = 8, kDoubleSumLanes = 4;
#else
constexpr int kFloatLanes = 1, kDoubleLanes = 1;
constexpr int kFloatSumLanes = 8, kDoubleSumLanes = 4;
#endif
template <class T>
constexpr int kLanesOf = sizeof(T) == 4 ? kFloatLanes : kDoubleLanes;
template <class T>
constexpr int kSumLanesOf = sizeof(T) == 4 ? kFloatSumLanes : kDoubleSumLanes;

#if TAPEGRAD_ISA_LEVEL == 2
template <Fn F>
__m512 call(__m512 v) {
  if constexpr (F == Fn::kExp) return Sleef_expf16_u10(v);
  if constexpr (F == Fn::kExpm1) return Sleef_expm1f16_u10(v);
  if constexpr (F == Fn::kLog) return Sleef_logf16_u10(v);
  if constexpr (F == Fn::kTanh) return Sleef_tanhf16_u10(v);
  if constexpr (F == Fn::kCos) return Sleef_cosf16_u10(v);
  if constexpr (F == Fn::kSin) return Sleef_sinf16_u10(v);
}
template <Fn F>
__m512d call(__m512d v) {
  if constexpr (F == Fn::kExp) return Sleef_expd8_u10(v);
  if constexpr (F == Fn::kExpm1) return Sleef_expm1d8_u10(v);
  if constexpr (F == Fn::kLog) return Sleef_logd8_u10(v);
  if constexpr (F == Fn::kTanh) return Sleef_tanhd8_u10(v);
  if constexpr (F == Fn::kCos) return Sleef_cosd8_u10(v);
  if constexpr (F == Fn::kSin) return Sleef_sind8_u10(v);
}
// base^v, torch's Vectorized<float>::pow.
inline __m512 pow_of(float base, __m512 v) {
  return Sleef_powf16_u10(_mm512_set1_ps(base), v);
}
inline __m512 load(const float* p) {
  return _mm512_loadu_ps(p);
}
inline __m512d load(const double* p) {
  return _mm512_loadu_pd(p);
}
inline void store(float* p, __m512 v) {
  _mm512_storeu_ps(p, v);
}
inline void store(double* p, __m512d v) {
  _mm512_storeu_pd(p, v);
}
// The first n < 16 (8) lanes, the others zero; storing the first n only.
inline __m512 load_first(const float* p, int64_t n) {
  return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p);
}
inline __m512d load_first(const double* p, int64_t n) {
  return _mm512_maskz_loadu_pd(static_cast<__mmask8>((1u << n) - 1), p);
}
inline void store_first(float* p, __m512 v, int64_t n) {
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1), v);
}
inline void store_first(double* p, __m512d v, int64_t n) {
  _mm512_mask_storeu_pd(p, static_cast<__mmask8>((1u << n) - 1), v);
}
#elif TAPEGRAD_ISA_LEVEL == 1
template <Fn F>
__m256 call(__m256 v) {
  if constexpr (F == Fn::kExp) return Sleef_expf8_u10(v);
  if constexpr (F == Fn::kExpm1) return Sleef_expm1f8_u10(v);
  if constexpr (F == Fn::kLog) return Sleef_logf8_u10(v);
  if constexpr (F == Fn::kTanh) return Sleef_tanhf8_u10(v);
  if constexpr (F == Fn::kCos) return Sleef_cosf8_u10(v);
  if constexpr (F == Fn::kSin) return Sleef_sinf8_u10(v);
}
template <Fn F>
__m256d call(__m256d v) {
  if constexpr (F == Fn::kExp) return Sleef_expd4_u10(v);
  if constexpr (F == Fn::kExpm1) return Sleef_expm1d4_u10(v);
  if constexpr (F == Fn::kLog) return Sleef_logd4_u10(v);
  if constexpr (F == Fn::kTanh) return Sleef_tanhd4_u10(v);
  if constexpr (F == Fn::kCos) return Sleef_cosd4_u10(v);
  if constexpr (F == Fn::kSin) return Sleef_sind4_u10(v);
}
inline __m256 pow_of(float base, __m256 v) {
  return Sleef_powf8_u10(_mm256_set1_ps(base), v);
}
inline __m256 load(const float* p) {
  return _mm256_loadu_ps(p);
}
inline __m256d load(const double* p) {
  return _mm256_loadu_pd(p);
}
inline void store(float* p, __m256 v) {
  _mm256_storeu_ps(p, v);
}
inline void store(double* p, __m256d v) {
  _mm256_storeu_pd(p, v);
}
#else
// The C library's functions, as torch's DEFAULT kernels call them (std::exp, ...).
template <Fn F>
float call(float v) {
  if constexpr (F == Fn::kExp) return __builtin_expf(v);
  if constexpr (F == Fn::kExpm1) return __builtin_expm1f(v);
  if constexpr (F == Fn::kLog) return __builtin_logf(v);
  if constexpr (F == Fn::kTanh) return __builtin_tanhf(v);
  if constexpr (F == Fn::kCos) return __builtin_cosf(v);
  if constexpr (F == Fn::kSin) return __builtin_sinf(v);
}
template <Fn F>
double call(double v) {
  if constexpr (F == Fn::kExp) return __builtin_exp(v);
  if constexpr (F == Fn::kExpm1) return __builtin_expm1(v);
  if constexpr (F == Fn::kLog) return __builtin_log(v);
  if constexpr (F == Fn::kTanh) return __builtin_tanh(v);
  if constexpr (F == Fn::kCos) return __builtin_cos(v);
  if constexpr (F == Fn::kSin) return __builtin_sin(v);
}
inline float pow_of(float base, float v) {
  return __builtin_powf(base, v);
}
inline float load(const float* p) {
  return *p;
}
inline double load(const double* p) {
  return *p;
}
inline void store(float* p, float v) {
  *p = v;
}
inline void store(double* p, double v) {
  *p = v;
}
#endif

// y = F(x) over n elements (y may alias x); the tail goes through a zero-padded vector (with
// AVX-512, masked loads and stores: short rows such as the book's attention rows are all tail).
template <class T, class G>
void apply_vector(const T* x, T* y, int64_t n, G g) {
  constexpr int kLanes = kLanesOf<T>;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(y + i, g(load(x + i)));
#if TAPEGRAD_ISA_LEVEL == 2
  if (i < n) store_first(y + i, g(load_first(x + i, n - i)), n - i);
#else
  if (i < n) {
    T pad[kLanes] = {};
    __builtin_memcpy(pad, x + i, static_cast<__SIZE_TYPE__>(n - i) * sizeof(T));
    store(pad, g(load(pad)));
    __builtin_memcpy(y + i, pad, static_cast<__SIZE_TYPE__>(n - i) * sizeof(T));
  }
#endif
}

template <Fn F, class T>
void apply(const T* x, T* y, int64_t n) {
  apply_vector(x, y, n, [](auto v) { return call<F>(v); });
}

template <class T>
void sigmoid_impl(const T* x, T* y, int64_t n) {
  // torch: (1 + (−x).exp()).reciprocal()
  alignas(64) T e[kChunk];
  for (int64_t s = 0; s < n; s += kChunk) {
    const int64_t len = n - s < kChunk ? n - s : kChunk;
    for (int64_t i = 0; i < len; ++i) e[i] = -x[s + i];
    apply<Fn::kExp>(e, e, len);
    for (int64_t i = 0; i < len; ++i) y[s + i] = T(1) / (T(1) + e[i]);
  }
}

constexpr double kBeta = kGeluBeta;
constexpr double kKappa = kGeluKappa;

template <class T>
void gelu_impl(const T* x, T* y, int64_t n) {
  const T beta = static_cast<T>(kBeta), kappa = static_cast<T>(kKappa);
  alignas(64) T t[kChunk];
  for (int64_t s = 0; s < n; s += kChunk) {
    const int64_t len = n - s < kChunk ? n - s : kChunk;
    const T* xs = x + s;
    for (int64_t i = 0; i < len; ++i) {
      const T v = xs[i];
      t[i] = beta * (v + kappa * (v * v * v));
    }
    apply<Fn::kTanh>(t, t, len);
    T* ys = y + s;
    for (int64_t i = 0; i < len; ++i) ys[i] = T(0.5) * xs[i] * (T(1) + t[i]);
  }
}

template <class T>
void gelu_backward_impl(const T* __restrict x, const T* __restrict dy, T* __restrict dx,
                        int64_t n) {
  const T beta = static_cast<T>(kBeta), kappa = static_cast<T>(kKappa);
  alignas(64) T t[kChunk];
  for (int64_t s = 0; s < n; s += kChunk) {
    const int64_t len = n - s < kChunk ? n - s : kChunk;
    const T* xs = x + s;
    for (int64_t i = 0; i < len; ++i) {
      const T v = xs[i], v2 = v * v;
      t[i] = beta * (v + kappa * (v2 * v));
    }
    apply<Fn::kTanh>(t, t, len);
    const T* dys = dy + s;
    T* dxs = dx + s;
    for (int64_t i = 0; i < len; ++i) {
      const T v = xs[i], v2 = v * v, th = t[i];
      const T left = T(0.5) * (T(1) + th);
      const T right = T(0.5) * v * (T(1) - th * th) * (beta * (T(1) + T(3) * kappa * v2));
      dxs[i] += dys[i] * (left + right);
    }
  }
}

inline float root(float x) {
  return __builtin_sqrtf(x);
}
inline double root(double x) {
  return __builtin_sqrt(x);
}

// Max of a row, NaN-propagating (a NaN anywhere makes the row NaN, as torch's max does).
template <class T>
T row_max(const T* x, int64_t cols) {
  T m = -static_cast<T>(__builtin_inf());
  bool nan = false;
  for (int64_t j = 0; j < cols; ++j) {
    m = m < x[j] ? x[j] : m;  // std::max
    nan |= x[j] != x[j];
  }
  return nan ? static_cast<T>(__builtin_nan("")) : m;
}

template <class T>
T row_sum(const T* x, int64_t cols) {
  // Lane-wise partial sums, then a pairwise fold: the order a vectorised reduction uses.
  constexpr int kLanes = kSumLanesOf<T>;
  T acc[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= cols; j += kLanes) {
    for (int l = 0; l < kLanes; ++l) acc[l] += x[j + l];
  }
  for (int l = 0; j < cols; ++j, ++l) acc[l] += x[j];
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int l = 0; l < width; ++l) acc[l] += acc[l + width];
  }
  return acc[0];
}

template <class T>
void softmax_impl(const T* x, T* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    const T m = row_max(xr, cols);
    for (int64_t j = 0; j < cols; ++j) yr[j] = xr[j] - m;
    apply<Fn::kExp>(yr, yr, cols);
    const T inv = T(1) / row_sum(yr, cols);
    for (int64_t j = 0; j < cols; ++j) yr[j] *= inv;
  }
}

template <class T>
void logsumexp_impl(const T* x, T* lse, int64_t rows, int64_t cols) {
  alignas(64) T e[kChunk];
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    const T m = row_max(xr, cols);
    // An infinite max (a row of −inf, or +inf) would give inf − inf: its log-sum-exp is m.
    if (__builtin_isinf(m)) {
      lse[r] = m;
      continue;
    }
    T sum = 0;
    for (int64_t s = 0; s < cols; s += kChunk) {
      const int64_t len = cols - s < kChunk ? cols - s : kChunk;
      for (int64_t j = 0; j < len; ++j) e[j] = xr[s + j] - m;
      apply<Fn::kExp>(e, e, len);
      sum += row_sum(e, len);
    }
    T log_sum;
    apply<Fn::kLog>(&sum, &log_sum, 1);
    lse[r] = m + log_sum;
  }
}

template <class T>
void log_softmax_impl(const T* x, const T* lse, T* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const T l = lse[r];
    for (int64_t j = 0; j < cols; ++j) y[r * cols + j] = x[r * cols + j] - l;
  }
}

template <class T>
void layer_norm_impl(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t rows,
                     int64_t cols, double eps) {
  const T n = static_cast<T>(cols);
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    const T mu = row_sum(xr, cols) / n;
    // The centred values go through y, which then holds the output: one read of x per pass.
    for (int64_t j = 0; j < cols; ++j) yr[j] = xr[j] - mu;
    T sq = 0;
    {
      constexpr int kLanes = kSumLanesOf<T>;
      T acc[kLanes] = {};
      int64_t j = 0;
      for (; j + kLanes <= cols; j += kLanes) {
        for (int l = 0; l < kLanes; ++l) acc[l] += yr[j + l] * yr[j + l];
      }
      for (int l = 0; j < cols; ++j, ++l) acc[l] += yr[j] * yr[j];
      for (int width = kLanes / 2; width > 0; width /= 2) {
        for (int l = 0; l < width; ++l) acc[l] += acc[l + width];
      }
      sq = acc[0];
    }
    const T var = sq / n;
    const T rs = T(1) / root(var + static_cast<T>(eps));
    mean[r] = mu;
    rstd[r] = rs;
    if (w != nullptr && b != nullptr) {
      for (int64_t j = 0; j < cols; ++j) yr[j] = yr[j] * rs * w[j] + b[j];
    } else if (w != nullptr) {
      for (int64_t j = 0; j < cols; ++j) yr[j] = yr[j] * rs * w[j];
    } else if (b != nullptr) {
      for (int64_t j = 0; j < cols; ++j) yr[j] = yr[j] * rs + b[j];
    } else {
      for (int64_t j = 0; j < cols; ++j) yr[j] = yr[j] * rs;
    }
  }
}

template <class T>
void layer_norm_backward_impl(const T* x, const T* w, const T* mean, const T* rstd, const T* dy,
                              T* dx, T* dw, T* db, int64_t rows, int64_t cols) {
  const T n = static_cast<T>(cols);
  alignas(64) T xhat_buf[kChunk];
  alignas(64) T g_buf[kChunk];
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    const T* dyr = dy + r * cols;
    const T mu = mean[r], rs = rstd[r];
    T sum_g = 0, sum_gx = 0;
    // Pass 1: the two row sums, and dw/db (they need x̂ and dy, which this pass reads anyway).
    for (int64_t s = 0; s < cols; s += kChunk) {
      const int64_t len = cols - s < kChunk ? cols - s : kChunk;
      for (int64_t j = 0; j < len; ++j) xhat_buf[j] = (xr[s + j] - mu) * rs;
      for (int64_t j = 0; j < len; ++j)
        g_buf[j] = w != nullptr ? dyr[s + j] * w[s + j] : dyr[s + j];
      if (dx != nullptr) {
        for (int64_t j = 0; j < len; ++j) {
          sum_g += g_buf[j];
          sum_gx += g_buf[j] * xhat_buf[j];
        }
      }
      if (dw != nullptr) {
        for (int64_t j = 0; j < len; ++j) dw[s + j] += dyr[s + j] * xhat_buf[j];
      }
      if (db != nullptr) {
        for (int64_t j = 0; j < len; ++j) db[s + j] += dyr[s + j];
      }
    }
    if (dx == nullptr) continue;
    const T mean_g = sum_g / n, mean_gx = sum_gx / n;
    T* dxr = dx + r * cols;
    for (int64_t j = 0; j < cols; ++j) {
      const T xhat = (xr[j] - mu) * rs;
      const T g = w != nullptr ? dyr[j] * w[j] : dyr[j];
      dxr[j] += rs * (g - mean_g - xhat * mean_gx);
    }
  }
}

template <class T>
void exp_k(const T* x, T* y, int64_t n) {
  apply<Fn::kExp>(x, y, n);
}
template <class T>
void expm1_k(const T* x, T* y, int64_t n) {
  apply<Fn::kExpm1>(x, y, n);
}
template <class T>
void log_k(const T* x, T* y, int64_t n) {
  apply<Fn::kLog>(x, y, n);
}
template <class T>
void tanh_k(const T* x, T* y, int64_t n) {
  apply<Fn::kTanh>(x, y, n);
}
template <class T>
void cos_k(const T* x, T* y, int64_t n) {
  apply<Fn::kCos>(x, y, n);
}
template <class T>
void sin_k(const T* x, T* y, int64_t n) {
  apply<Fn::kSin>(x, y, n);
}
void pow_base_k(float base, const float* x, float* y, int64_t n) {
  apply_vector(x, y, n, [base](auto v) { return pow_of(base, v); });
}

template <class T>
constexpr Kernels<T> table(void (*pow_base)(T, const T*, T*, int64_t)) {
  return {&exp_k<T>,
          &expm1_k<T>,
          &log_k<T>,
          &tanh_k<T>,
          &cos_k<T>,
          &sin_k<T>,
          pow_base,
          &sigmoid_impl<T>,
          &gelu_impl<T>,
          &gelu_backward_impl<T>,
          &softmax_impl<T>,
          &logsumexp_impl<T>,
          &log_softmax_impl<T>,
          &layer_norm_impl<T>,
          &layer_norm_backward_impl<T>};
}

}  // namespace

const Kernels<float> kFloat = table<float>(&pow_base_k);
const Kernels<double> kDouble = table<double>(nullptr);

}  // namespace tapegrad::vmath::levels::TAPEGRAD_VMATH_NAMESPACE
