// nn.Linear's default initialisation: torch's bounds in its Python double arithmetic, then uniform.
#include <tapegrad/nn/init.h>

#include <cmath>
#include <string>

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

}  // namespace tapegrad::nn
