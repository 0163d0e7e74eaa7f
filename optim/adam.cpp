// Adam and AdamW: torch.optim's single-tensor updates, one fused, threaded pass over all
// parameters.
#include "optim/adam.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "optim/util.h"

// The arithmetic below is written out operation by operation to round where torch rounds (its
// Python-side scalars unfused, its CPU kernels' fused multiply-adds as explicit std::fma), so
// the compiler must not contract a*b + c on its own (GCC's default in C++ is to contract).
#pragma GCC optimize("fp-contract=off")

namespace tapegrad {

using optim_detail::AdamStep;
using optim_detail::dispatch_dtype;
using optim_detail::for_all_elements;
using optim_detail::format_number;
using optim_detail::one_group;
using optim_detail::with_flags;

namespace {

AdamOptions from_adamw(const AdamWOptions& o) {
  return AdamOptions{.lr = o.lr,
                     .betas = o.betas,
                     .eps = o.eps,
                     .weight_decay = o.weight_decay,
                     .amsgrad = o.amsgrad,
                     .maximize = o.maximize};
}

// x[i] = sqrt(x[i]), correctly rounded, vectorized where AVX is available. std::sqrt in a loop
// does not vectorize (GCC keeps a branch to set errno for negative inputs), and Eigen's packet
// sqrt on AVX-512 is either an approximation (EIGEN_FAST_MATH=1) or, as this library builds it
// (EIGEN_FAST_MATH=0), scalar; the AVX instruction is exact, like std::sqrt.
template <class T>
void sqrt_in_place(T* x, int64_t n) {
  int64_t i = 0;
#if defined(__AVX__)
  if constexpr (std::is_same_v<T, float>) {
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_sqrt_ps(_mm256_loadu_ps(x + i)));
  } else {
    for (; i + 4 <= n; i += 4) _mm256_storeu_pd(x + i, _mm256_sqrt_pd(_mm256_loadu_pd(x + i)));
  }
#endif
  for (; i < n; ++i) x[i] = std::sqrt(x[i]);
}

// torch's roundings, in order: the gradient clipped (times its pending scale, 1 when none:
// exact); each Python scalar cast to T; mul_ then add_(alpha) as
// fma(y, alpha, x·s); addcmul_ as fma(value·g, g, x); the denominator as sqrt(v) / T(bc2_sqrt)
// + T(eps); addcdiv_ as p + (T(-step_size)·m) / denom.
// For speed, the flags are template arguments (no branch in the loops) and the work goes in
// chunks through a stack buffer: the moments, the denominators, then the parameters.
template <class T, bool kMaximize, bool kDecoupled, bool kCoupledDecay, bool kAmsgrad>
void adam_loop(T* __restrict p, const T* __restrict grad, T grad_scale, T* __restrict m,
               T* __restrict v, T* __restrict v_max, int64_t n, const AdamStep& s) {
  const double t = static_cast<double>(s.t);
  const double bias_correction1 = 1.0 - std::pow(s.beta1, t);
  const double bias_correction2 = 1.0 - std::pow(s.beta2, t);
  const T neg_step_size = static_cast<T>(-(s.lr / bias_correction1));
  const T bc2_sqrt = static_cast<T>(std::sqrt(bias_correction2));
  const T b1 = static_cast<T>(s.beta1);
  const T one_minus_b1 = static_cast<T>(1.0 - s.beta1);
  const T b2 = static_cast<T>(s.beta2);
  const T one_minus_b2 = static_cast<T>(1.0 - s.beta2);
  const T eps = static_cast<T>(s.eps);
  const T wd = static_cast<T>(s.weight_decay);
  const T shrink = static_cast<T>(1.0 - s.lr * s.weight_decay);
  constexpr int64_t kChunk = 512;
  alignas(64) T denom[kChunk];
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t len = std::min(kChunk, n - start);
    T* __restrict pc = p + start;
    const T* __restrict gc = grad + start;
    T* __restrict mc = m + start;
    T* __restrict vc = v + start;
    for (int64_t i = 0; i < len; ++i) {
      const T g_clipped = gc[i] * grad_scale;  // clip_grad_norm_'s g.mul_(coef), deferred here
      T g = kMaximize ? -g_clipped : g_clipped;
      T w = pc[i];
      if constexpr (kDecoupled) w *= shrink;
      if constexpr (kCoupledDecay) g = std::fma(w, wd, g);
      pc[i] = w;
      mc[i] = std::fma(g, one_minus_b1, mc[i] * b1);
      const T v_i = std::fma(one_minus_b2 * g, g, vc[i] * b2);
      vc[i] = v_i;
      T second = v_i;
      if constexpr (kAmsgrad) {
        // torch.maximum: NaN wins, so a NaN moment is not silently dropped.
        T* __restrict vmc = v_max + start;
        second = v_i > vmc[i] || v_i != v_i ? v_i : vmc[i];
        vmc[i] = second;
      }
      denom[i] = second;
    }
    sqrt_in_place(denom, len);
    for (int64_t i = 0; i < len; ++i) denom[i] = denom[i] / bc2_sqrt + eps;
    for (int64_t i = 0; i < len; ++i) pc[i] = pc[i] + (neg_step_size * mc[i]) / denom[i];
  }
}

}  // namespace

Adam::Adam(std::vector<Parameter> params, AdamOptions options)
    : Adam("Adam", one_group(std::move(params)), options, false) {}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions options)
    : Adam("Adam", std::move(groups), options, false) {}

Adam::Adam(const char* name, std::vector<ParamGroup> groups, const AdamOptions& options,
           bool decoupled)
    : Optimizer(name, std::move(groups), options.lr, options.weight_decay),
      options_(options),
      decoupled_(decoupled) {
  for (int k = 0; k < 2; ++k) {
    const double beta = options.betas[static_cast<size_t>(k)];
    if (!(beta >= 0.0 && beta < 1.0)) {
      fail("betas[" + std::to_string(k) + "] must be in [0, 1), got " + format_number(beta));
    }
  }
  if (!(std::isfinite(options.eps) && options.eps > 0.0)) {
    fail("eps must be > 0, got " + format_number(options.eps));
  }
  if (options.amsgrad) {
    set_state_layout({"exp_avg", "exp_avg_sq", "max_exp_avg_sq"}, /*per_param_step=*/true);
  } else {
    set_state_layout({"exp_avg", "exp_avg_sq"}, /*per_param_step=*/true);
  }
}

void Adam::step() {
  // First the per-parameter bookkeeping (state, step count), then one pass over all elements.
  segments_.clear();
  size_t index = 0;
  for (const Group& group : groups_) {
    for (const Parameter& p : group.params) {
      ParamState& st = states_[index++];
      if (!p.requires_grad() || !p.has_grad()) continue;  // torch: .grad is None
      ensure_state(st, p);
      ++st.step;
      if (p.numel() == 0) continue;
      segments_.push_back(Segment{.param = p.raw_data(),
                                  .grad = p.grad_keeping_scale(),
                                  .grad_scale = p.grad_scale(),
                                  .m = st.slots[0].data(),
                                  .v = st.slots[1].data(),
                                  .v_max = st.slots[2].data(),  // null without amsgrad
                                  .n = p.numel(),
                                  .dtype = p.dtype(),
                                  .coupled_decay = !decoupled_ && group.weight_decay != 0.0,
                                  .s = AdamStep{group.lr, options_.betas[0], options_.betas[1],
                                                options_.eps, group.weight_decay, st.step}});
    }
  }
  for_all_elements(segments_, 20.0, [&](const Segment& seg, int64_t begin, int64_t end) {
    dispatch_dtype(seg.dtype, [&]<class T>() {
      T* v_max = seg.v_max != nullptr ? static_cast<T*>(seg.v_max) + begin : nullptr;
      with_flags(
          [&]<bool kMaximize, bool kDecoupled, bool kCoupledDecay, bool kAmsgrad>() {
            adam_loop<T, kMaximize, kDecoupled, kCoupledDecay, kAmsgrad>(
                static_cast<T*>(seg.param) + begin, static_cast<const T*>(seg.grad) + begin,
                static_cast<T>(seg.grad_scale), static_cast<T*>(seg.m) + begin,
                static_cast<T*>(seg.v) + begin, v_max, end - begin, seg.s);
          },
          options_.maximize, decoupled_, seg.coupled_decay, options_.amsgrad);
    });
  });
  ++steps_;
}

AdamW::AdamW(std::vector<Parameter> params, AdamWOptions options)
    : Adam("AdamW", one_group(std::move(params)), from_adamw(options), true) {}

AdamW::AdamW(std::vector<ParamGroup> groups, AdamWOptions options)
    : Adam("AdamW", std::move(groups), from_adamw(options), true) {}

}  // namespace tapegrad
