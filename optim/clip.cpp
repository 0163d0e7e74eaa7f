// Gradient clipping by total norm and by value, with torch's coefficient arithmetic.
#include <tapegrad/optim/clip.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/optim/updates.h>
#include <tapegrad/optim/optimizer.h>
#include <tapegrad/optim/util.h>

// The arithmetic below is written out operation by operation to round where torch rounds (its
// Python-side scalars unfused, its CPU kernels' fused multiply-adds as explicit std::fma), so
// the compiler must not contract a*b + c on its own (GCC's default in C++ is to contract).
#pragma GCC optimize("fp-contract=off")

namespace tapegrad {

using optim_detail::dispatch_dtype;
using optim_detail::format_number;

namespace {

// Σ g² of n values fl(stored · scale) (a pending clip coefficient, Parameter::grad_keeping_scale;
// 1 is exact) in an order fixed by n alone: kClipNormChunks contiguous chunks, each summed by
// optim_kernels::sum_of_squares (at the CPU level in use), then the chunk sums added in order. The
// chunks split over the threads, so the value is the same whatever the thread count.
template <class T>
double sum_of_squares(const T* g, T scale, int64_t n) {
  std::array<double, kClipNormChunks> chunk_sums{};
  parallel_for(kClipNormChunks, 3.0 * static_cast<double>(n) / kClipNormChunks,
               [&](int, int64_t c0, int64_t c1) {
                 for (int64_t c = c0; c < c1; ++c) {
                   const int ci = static_cast<int>(c);
                   chunk_sums[static_cast<size_t>(c)] = optim_kernels::sum_of_squares(
                       g, scale, clip_norm_chunk_begin(n, ci), clip_norm_chunk_begin(n, ci + 1));
                 }
               });
  double acc = 0.0;
  for (const double s : chunk_sums) acc += s;
  return acc;
}

// The norm_type-norm of n values fl(stored · scale), accumulated in double: Σ|g|^p then
// ^(1/p), or max |g|.
template <class T>
double norm_of(const T* g, T scale, int64_t n, double norm_type) {
  double acc = 0.0;
  if (std::isinf(norm_type)) {
    for (int64_t i = 0; i < n; ++i) {
      const double a = std::abs(static_cast<double>(g[i] * scale));
      acc = std::isnan(a) || std::isnan(acc) ? NAN : std::max(acc, a);
    }
    return acc;
  }
  if (norm_type == 2.0) return std::sqrt(sum_of_squares(g, scale, n));
  for (int64_t i = 0; i < n; ++i) {
    acc += std::pow(std::abs(static_cast<double>(g[i] * scale)), norm_type);
  }
  return norm_type == 1.0 ? acc : std::pow(acc, 1.0 / norm_type);
}

// Calls f(p) for every parameter of a list that has a gradient (torch skips .grad None).
struct ListParams {
  const std::vector<Parameter>& params;
  template <class F>
  void operator()(F&& f) const {
    for (const Parameter& p : params) {
      if (p.defined() && p.requires_grad() && p.has_grad()) f(p);
    }
  }
};

// The same over an optimiser's groups, without gathering them into a vector (no allocation).
struct OptimizerParams {
  const Optimizer& optimizer;
  template <class F>
  void operator()(F&& f) const {
    for (size_t g = 0; g < optimizer.num_groups(); ++g) {
      for (const Parameter& p : optimizer.params(g)) {
        if (p.requires_grad() && p.has_grad()) f(p);
      }
    }
  }
};

template <class ForEach>
double clip_norm(const ForEach& for_each, double max_norm, double norm_type,
                 bool error_if_nonfinite) {
  if (!(max_norm >= 0)) {
    throw Error("clip_grad_norm_: max_norm must be >= 0, got " + format_number(max_norm));
  }
  if (!(norm_type > 0)) {
    throw Error("clip_grad_norm_: norm_type must be > 0 (or INFINITY), got " +
                format_number(norm_type));
  }
  // torch: the norm of each gradient (in its dtype), then the norm of those norms. Here each
  // step is accumulated in double and rounded to the dtype, like torch's result; with mixed
  // dtypes the total is rounded to float32 only when every gradient is float32.
  double acc = 0.0;
  bool all_float32 = true;
  for_each([&](const Parameter& p) {
    all_float32 = all_float32 && p.dtype() == DType::Float32;
    const double part = dispatch_dtype(p.dtype(), [&]<class T>() {
      const auto* g = static_cast<const T*>(p.grad_keeping_scale());
      const auto scale = static_cast<T>(p.grad_scale());
      return static_cast<double>(static_cast<T>(norm_of(g, scale, p.numel(), norm_type)));
    });
    if (std::isinf(norm_type)) {
      acc = std::isnan(part) || std::isnan(acc) ? NAN : std::max(acc, part);
    } else {
      acc += norm_type == 2.0 ? part * part : std::pow(part, norm_type);
    }
  });
  double total = std::isinf(norm_type) ? acc
                 : norm_type == 2.0    ? std::sqrt(acc)
                 : norm_type == 1.0    ? acc
                                       : std::pow(acc, 1.0 / norm_type);
  if (all_float32) total = static_cast<float>(total);
  if (error_if_nonfinite && !std::isfinite(total)) {
    throw Error("clip_grad_norm_: the total norm of order " + format_number(norm_type) +
                " of the gradients is " + format_number(total) +
                ", so they cannot be clipped (error_if_nonfinite is set)");
  }
  for_each([&](const Parameter& p) {
    dispatch_dtype(p.dtype(), [&]<class T>() {
      // torch: clamp(max_norm / (total_norm + 1e-6), max=1), where scalar / tensor is
      // tensor.reciprocal() * scalar; in the norm's dtype.
      const T coef_raw =
          T(1) / (static_cast<T>(total) + static_cast<T>(1e-6)) * static_cast<T>(max_norm);
      const T coef = std::isnan(coef_raw) ? coef_raw : std::min(coef_raw, T(1));
      // torch's g.mul_(coef), deferred: the optimisers apply it in their pass, any other reader
      // when it reads the gradient (ParameterImpl::scale_grad).
      p.get()->scale_grad(static_cast<double>(coef));
    });
  });
  return total;
}

template <class ForEach>
void clip_value_impl(const ForEach& for_each, double clip_value) {
  if (!(clip_value >= 0)) {
    throw Error("clip_grad_value_: clip_value must be >= 0, got " + format_number(clip_value));
  }
  for_each([&](const Parameter& p) {
    dispatch_dtype(p.dtype(), [&]<class T>() {
      const T hi = static_cast<T>(clip_value);
      T* g = p.grad<T>();
      const int64_t n = p.numel();
      // torch's clamp_(min, max) keeps NaN.
      for (int64_t i = 0; i < n; ++i) g[i] = std::isnan(g[i]) ? g[i] : std::clamp(g[i], -hi, hi);
    });
  });
}

}  // namespace

double clip_norm_chunk_sum_of_squares(const float* g, int64_t begin, int64_t end) {
  return optim_kernels::sum_of_squares(g, 1.0f, begin, end);
}

double clip_norm_chunk_sum_of_squares(const double* g, int64_t begin, int64_t end) {
  return optim_kernels::sum_of_squares(g, 1.0, begin, end);
}

double clip_norm_part(double sum_of_squares, DType dtype) {
  return dispatch_dtype(dtype, [&]<class T>() {
    const double part = static_cast<double>(static_cast<T>(std::sqrt(sum_of_squares)));
    return part * part;
  });
}

double clip_norm_total(double sum_of_parts, bool all_float32) {
  const double total = std::sqrt(sum_of_parts);
  return all_float32 ? static_cast<double>(static_cast<float>(total)) : total;
}

double clip_grad_norm_(const std::vector<Parameter>& params, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  return clip_norm(ListParams{params}, max_norm, norm_type, error_if_nonfinite);
}

double clip_grad_norm_(const Optimizer& optimizer, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  return clip_norm(OptimizerParams{optimizer}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Parameter>& params, double clip_value) {
  clip_value_impl(ListParams{params}, clip_value);
}

void clip_grad_value_(const Optimizer& optimizer, double clip_value) {
  clip_value_impl(OptimizerParams{optimizer}, clip_value);
}

}  // namespace tapegrad
