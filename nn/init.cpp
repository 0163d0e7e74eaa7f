// nn.Linear's default initialisation and torch.nn.init's functions: torch's bounds in its Python
// double arithmetic, then torch's uniform_ / normal_ (and for trunc_normal_, its erfinv).
#include <tapegrad/nn/init.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <type_traits>

#include <tapegrad/graph/error.h>

// The bounds must round as Python's doubles do: the two products that would otherwise fuse into
// an FMA (GCC contracts across statements once -march enables FMA) go through volatiles.
#if defined(__FAST_MATH__)
#error "nn/init.cpp reproduces torch bit for bit and must not be compiled with -ffast-math"
#endif

namespace tapegrad::nn {

double kaiming_uniform_bound(int64_t fan_in, double a) {
  if (fan_in < 1) {
    throw Error("kaiming_uniform_bound: fan_in must be positive, got " + std::to_string(fan_in));
  }
  // torch: gain = math.sqrt(2.0 / (1 + a ** 2)); std = gain / math.sqrt(fan);
  // bound = math.sqrt(3.0) * std. The volatile keeps a * a rounded on its own, as Python does,
  // instead of being fused into 1 + a * a.
  volatile double a_squared = a * a;
  const double gain = std::sqrt(2.0 / (1.0 + a_squared));
  const double std = gain / std::sqrt(static_cast<double>(fan_in));
  // Rounded here too: callers compute bound - (-bound), which must not fuse with this product.
  volatile double bound = std::sqrt(3.0) * std;
  return bound;
}

double linear_init_weight_bound(int64_t fan_in) {
  return kaiming_uniform_bound(fan_in, std::sqrt(5.0));
}

double linear_init_bound(int64_t fan_in) {
  if (fan_in < 0) {
    throw Error("linear_init_bound: negative fan_in " + std::to_string(fan_in));
  }
  return fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
}

namespace {

template <class T>
void init_weight(T* w, int64_t out_features, int64_t in_features, Generator& g) {
  if (out_features < 0 || in_features < 0) {
    throw Error("linear_init_weight: negative size [" + std::to_string(out_features) + ", " +
                std::to_string(in_features) + "]");
  }
  if (out_features == 0 || in_features == 0) return;
  const double bound = linear_init_weight_bound(in_features);
  g.uniform(w, out_features * in_features, -bound, bound);
}

template <class T>
void init_bias(T* b, int64_t out_features, int64_t fan_in, Generator& g) {
  if (out_features < 0) {
    throw Error("linear_init_bias: negative element count " + std::to_string(out_features));
  }
  const double bound = linear_init_bound(fan_in);
  g.uniform(b, out_features, -bound, bound);
}

}  // namespace

void linear_init_weight(float* w, int64_t out_features, int64_t in_features, Generator& g) {
  init_weight(w, out_features, in_features, g);
}
void linear_init_weight(double* w, int64_t out_features, int64_t in_features, Generator& g) {
  init_weight(w, out_features, in_features, g);
}
void linear_init_bias(float* b, int64_t out_features, int64_t fan_in, Generator& g) {
  init_bias(b, out_features, fan_in, g);
}
void linear_init_bias(double* b, int64_t out_features, int64_t fan_in, Generator& g) {
  init_bias(b, out_features, fan_in, g);
}

// --- torch.nn.init ---------------------------------------------------------------------------

namespace {

// Calls f.template operator()<T>(data, n) with the parameter's values.
template <class F>
void init_with_values(const Parameter& p, F&& f) {
  if (p.dtype() == DType::Float32) {
    f(p.data<float>(), p.numel());
  } else {
    f(p.data<double>(), p.numel());
  }
}

void init_uniform_values(const Parameter& p, double a, double b, Generator& g) {
  init_with_values(p, [&](auto* v, int64_t n) { g.uniform(v, n, a, b); });
}

void init_normal_values(const Parameter& p, double mean, double std, Generator& g) {
  init_with_values(p, [&](auto* v, int64_t n) { g.normal(v, n, mean, std); });
}

std::string init_lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

int64_t init_correct_fan(const Shape& shape, const std::string& mode) {
  const std::string m = init_lower(mode);
  if (m != "fan_in" && m != "fan_out") {
    throw Error("kaiming: mode " + mode + " not supported, please use one of fan_in, fan_out");
  }
  const Fans fans = calculate_fans(shape);
  return m == "fan_in" ? fans.fan_in : fans.fan_out;
}

double init_xavier_std(const Parameter& p, double gain) {
  const Fans fans = calculate_fans(p.shape());
  if (fans.fan_in + fans.fan_out == 0) {
    throw Error("xavier: the shape " + p.shape().str() + " has fan_in + fan_out = 0");
  }
  // torch: std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
  volatile double std = gain * std::sqrt(2.0 / static_cast<double>(fans.fan_in + fans.fan_out));
  return std;
}

double init_kaiming_std(const Parameter& p, double a, const std::string& mode,
                        const std::string& nonlinearity) {
  const int64_t fan = init_correct_fan(p.shape(), mode);
  // torch: gain = calculate_gain(nonlinearity, a); std = gain / math.sqrt(fan)
  volatile double std = calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan));
  return std;
}

bool init_has_zero_dim(const Shape& shape) {
  for (int64_t d : shape.dims()) {
    if (d == 0) return true;
  }
  return false;
}

// torch's calc_erfinv (c10's Math.h, from Pavlis' MATLAB erfinv): a rational first guess, then
// two Newton steps; the polynomials' multiply-adds fused, as torch's AVX2 build (GCC, -mfma)
// compiles them, and erf, exp, log in T, as its std:: calls.
template <class T>
T init_torch_erfinv(T y) {
  constexpr T a[4] = {T(0.886226899), T(-1.645349621), T(0.914624893), T(-0.140543331)};
  constexpr T b[4] = {T(-2.118377725), T(1.442710462), T(-0.329097515), T(0.012229801)};
  constexpr T c[4] = {T(-1.970840454), T(-1.624906493), T(3.429567803), T(1.641345311)};
  constexpr T d[2] = {T(3.543889200), T(1.637067800)};
  const T y_abs = std::abs(y);
  if (y_abs > T(1)) return std::numeric_limits<T>::quiet_NaN();
  if (y_abs == T(1)) return std::copysign(std::numeric_limits<T>::infinity(), y);
  T x;
  if (y_abs <= T(0.7)) {
    const T z = y * y;
    const T num = std::fma(std::fma(std::fma(a[3], z, a[2]), z, a[1]), z, a[0]);
    const T dem = std::fma(std::fma(std::fma(std::fma(b[3], z, b[2]), z, b[1]), z, b[0]), z, T(1));
    x = y * num / dem;
  } else {
    const T z = std::sqrt(-std::log((T(1) - y_abs) / T(2)));
    const T num = std::fma(std::fma(std::fma(c[3], z, c[2]), z, c[1]), z, c[0]);
    const T dem = std::fma(std::fma(d[1], z, d[0]), z, T(1));
    x = std::copysign(num, y) / dem;
  }
  const T two_over_root_pi = T(2) / static_cast<T>(std::sqrt(std::numbers::pi));
  for (int step = 0; step < 2; ++step) {
    x = x - (std::erf(x) - y) / (two_over_root_pi * std::exp(-x * x));
  }
  return x;
}

double init_norm_cdf(double x) {  // torch: (1. + math.erf(x / math.sqrt(2.))) / 2.
  return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0;
}

}  // namespace

double calculate_gain(const std::string& nonlinearity, std::optional<double> param) {
  static const char* const kLinear[] = {"linear",           "conv1d",           "conv2d",
                                        "conv3d",           "conv_transpose1d", "conv_transpose2d",
                                        "conv_transpose3d", "sigmoid"};
  for (const char* name : kLinear) {
    if (nonlinearity == name) return 1.0;
  }
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "selu") return 3.0 / 4.0;
  if (nonlinearity == "leaky_relu") {
    const double slope = param.value_or(0.01);
    if (!std::isfinite(slope)) {
      throw Error("calculate_gain: negative_slope " + std::to_string(slope) +
                  " not a valid number");
    }
    volatile double slope_squared = slope * slope;  // rounded alone, as Python's slope ** 2
    return std::sqrt(2.0 / (1.0 + slope_squared));
  }
  throw Error("calculate_gain: unsupported nonlinearity " + nonlinearity);
}

Fans calculate_fans(const Shape& shape) {
  if (shape.rank() < 2) {
    throw Error(
        "calculate_fans: fan in and fan out can not be computed for a tensor with fewer "
        "than 2 dimensions, got " +
        shape.str());
  }
  int64_t receptive = 1;
  for (int i = 2; i < shape.rank(); ++i) receptive *= shape[i];
  return {shape[1] * receptive, shape[0] * receptive};
}

void uniform_(const Parameter& p, double a, double b, Generator& g) {
  init_uniform_values(p, a, b, g);
}

void normal_(const Parameter& p, double mean, double std, Generator& g) {
  init_normal_values(p, mean, std, g);
}

void constant_(const Parameter& p, double value) {
  init_with_values(p, [&](auto* v, int64_t n) {
    using T = std::remove_pointer_t<decltype(v)>;
    std::fill(v, v + n, static_cast<T>(value));
  });
}

void zeros_(const Parameter& p) {
  constant_(p, 0.0);
}

void ones_(const Parameter& p) {
  constant_(p, 1.0);
}

void xavier_uniform_(const Parameter& p, double gain, Generator& g) {
  const double std = init_xavier_std(p, gain);
  volatile double bound = std::sqrt(3.0) * std;  // torch: a = math.sqrt(3.0) * std
  init_uniform_values(p, -bound, bound, g);
}

void xavier_normal_(const Parameter& p, double gain, Generator& g) {
  init_normal_values(p, 0.0, init_xavier_std(p, gain), g);
}

void kaiming_uniform_(const Parameter& p, double a, const std::string& mode,
                      const std::string& nonlinearity, Generator& g) {
  if (init_has_zero_dim(p.shape())) return;
  const double std = init_kaiming_std(p, a, mode, nonlinearity);
  volatile double bound = std::sqrt(3.0) * std;
  init_uniform_values(p, -bound, bound, g);
}

void kaiming_normal_(const Parameter& p, double a, const std::string& mode,
                     const std::string& nonlinearity, Generator& g) {
  if (init_has_zero_dim(p.shape())) return;
  init_normal_values(p, 0.0, init_kaiming_std(p, a, mode, nonlinearity), g);
}

void trunc_normal_(const Parameter& p, double mean, double std, double a, double b, Generator& g) {
  if (!(std > 0.0) || !std::isfinite(std) || !std::isfinite(mean) || !(a <= b)) {
    throw Error("trunc_normal_: needs a finite std > 0, a finite mean and a <= b, got mean = " +
                std::to_string(mean) + ", std = " + std::to_string(std) +
                ", a = " + std::to_string(a) + ", b = " + std::to_string(b));
  }
  const double low = init_norm_cdf((a - mean) / std);
  const double high = init_norm_cdf((b - mean) / std);
  init_uniform_values(p, 2.0 * low - 1.0, 2.0 * high - 1.0, g);
  volatile double scale = std * std::sqrt(2.0);  // torch's tensor.mul_(std * math.sqrt(2.))
  init_with_values(p, [&](auto* v, int64_t n) {
    using T = std::remove_pointer_t<decltype(v)>;
    const T factor = static_cast<T>(scale), shift = static_cast<T>(mean);
    const T lo = static_cast<T>(a), hi = static_cast<T>(b);
    for (int64_t i = 0; i < n; ++i) {
      volatile T scaled = init_torch_erfinv(v[i]) * factor;  // one rounding per in-place op
      v[i] = std::min(std::max(static_cast<T>(scaled + shift), lo), hi);
    }
  });
}

namespace {

// Q of a's QR (a: m x n, m >= n, column-major, overwritten) with each column times the sign of
// R's diagonal entry, i.e. the Q whose R has a positive diagonal, which is unique: LAPACK's
// Householder QR in torch and this one in double give the same Q up to rounding. Returned
// column-major, m x n.
std::vector<double> init_positive_qr_q(std::vector<double>& a, int64_t m, int64_t n) {
  auto at = [&](int64_t i, int64_t j) -> double& { return a[static_cast<size_t>(j * m + i)]; };
  std::vector<double> vs(static_cast<size_t>(m * n), 0.0);  // Householder vectors, one a column
  std::vector<double> sign(static_cast<size_t>(n), 1.0);
  for (int64_t k = 0; k < n; ++k) {
    double norm = 0.0;
    for (int64_t i = k; i < m; ++i) norm = std::hypot(norm, at(i, k));
    // R(k, k) = alpha, chosen against x0's sign so that v = x - alpha e1 does not cancel.
    const double alpha = at(k, k) > 0.0 ? -norm : norm;
    double* v = vs.data() + k * m;
    for (int64_t i = k; i < m; ++i) v[i] = at(i, k);
    v[k] -= alpha;
    double v_norm = 0.0;
    for (int64_t i = k; i < m; ++i) v_norm = std::hypot(v_norm, v[i]);
    sign[static_cast<size_t>(k)] = alpha < 0.0 ? -1.0 : (alpha > 0.0 ? 1.0 : 0.0);
    if (v_norm == 0.0) continue;  // the column is already R's: H = I
    for (int64_t i = k; i < m; ++i) v[i] /= v_norm;
    for (int64_t j = k; j < n; ++j) {  // A(k:, j) -= 2 v (vᵀ A(k:, j))
      double dot = 0.0;
      for (int64_t i = k; i < m; ++i) dot += v[i] * at(i, j);
      for (int64_t i = k; i < m; ++i) at(i, j) -= 2.0 * dot * v[i];
    }
  }
  // Q = H_0 ... H_(n-1) applied to the first n columns of the identity, last reflection first.
  std::vector<double> q(static_cast<size_t>(m * n), 0.0);
  for (int64_t j = 0; j < n; ++j) q[static_cast<size_t>(j * m + j)] = 1.0;
  for (int64_t k = n - 1; k >= 0; --k) {
    const double* v = vs.data() + k * m;
    for (int64_t j = 0; j < n; ++j) {
      double* col = q.data() + j * m;
      double dot = 0.0;
      for (int64_t i = k; i < m; ++i) dot += v[i] * col[i];
      for (int64_t i = k; i < m; ++i) col[i] -= 2.0 * dot * v[i];
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i)
      q[static_cast<size_t>(j * m + i)] *= sign[static_cast<size_t>(j)];
  }
  return q;
}

}  // namespace

void orthogonal_(const Parameter& p, double gain, Generator& g) {
  const Shape& shape = p.shape();
  if (shape.rank() < 2) {
    throw Error("orthogonal_: only tensors with 2 or more dimensions are supported, got " +
                shape.str());
  }
  if (shape.numel() == 0) return;  // torch: a no-op, nothing drawn
  const int64_t rows = shape[0], cols = shape.numel() / rows;
  const bool wide = rows < cols;  // torch factors the transpose then
  const int64_t m = wide ? cols : rows, n = wide ? rows : cols;
  init_with_values(p, [&](auto* v, int64_t count) {
    using T = std::remove_pointer_t<decltype(v)>;
    g.normal(v, count, 0.0, 1.0);  // torch's tensor.new(rows, cols).normal_(0, 1)
    std::vector<double> a(static_cast<size_t>(count));
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        // [rows, cols] row-major is [cols, rows] column-major: the transpose as it lies.
        a[static_cast<size_t>(wide ? i * cols + j : j * rows + i)] = v[i * cols + j];
      }
    }
    const std::vector<double> q = init_positive_qr_q(a, m, n);
    const T factor = static_cast<T>(gain);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        const double qij = q[static_cast<size_t>(wide ? i * cols + j : j * rows + i)];
        v[i * cols + j] = static_cast<T>(qij) * factor;  // torch: q in T, then mul_(gain)
      }
    }
  });
}

}  // namespace tapegrad::nn
