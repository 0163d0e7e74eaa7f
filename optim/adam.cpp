// Adam and AdamW: torch.optim's single-tensor updates, one fused loop per parameter.
#include "optim/adam.h"

#include <cmath>
#include <utility>

#include "optim/util.h"

// The arithmetic below is written out operation by operation to round where torch rounds (its
// Python-side scalars unfused, its CPU kernels' fused multiply-adds as explicit std::fma), so
// the compiler must not contract a*b + c on its own (GCC's default in C++ is to contract).
#pragma GCC optimize("fp-contract=off")

namespace tapegrad {

using optim_detail::dispatch_dtype;
using optim_detail::format_number;

namespace {

std::vector<ParamGroup> one_group(std::vector<Parameter> params) {
  std::vector<ParamGroup> groups(1);
  groups[0].params = std::move(params);
  return groups;
}

AdamOptions from_adamw(const AdamWOptions& o) {
  return AdamOptions{.lr = o.lr,
                     .betas = o.betas,
                     .eps = o.eps,
                     .weight_decay = o.weight_decay,
                     .amsgrad = o.amsgrad,
                     .maximize = o.maximize};
}

struct AdamStep {
  double lr, beta1, beta2, eps, weight_decay;
  int64_t t;  // this parameter's step, from 1
  bool decoupled, amsgrad, maximize;
};

// torch's roundings, in order: each Python scalar cast to T; mul_ then add_(alpha) as
// fma(y, alpha, x·s); addcmul_ as fma(value·g, g, x); the denominator as sqrt(v) / T(bc2_sqrt)
// + T(eps); addcdiv_ as p + (T(-step_size)·m) / denom.
template <class T>
void adam_update(T* p, const T* grad, T* m, T* v, T* v_max, int64_t n, const AdamStep& s) {
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
  const bool coupled_decay = !s.decoupled && s.weight_decay != 0.0;
  for (int64_t i = 0; i < n; ++i) {
    T g = s.maximize ? -grad[i] : grad[i];
    if (s.decoupled) p[i] *= shrink;
    if (coupled_decay) g = std::fma(p[i], wd, g);
    m[i] = std::fma(g, one_minus_b1, m[i] * b1);
    v[i] = std::fma(one_minus_b2 * g, g, v[i] * b2);
    T second = v[i];
    if (s.amsgrad) {
      // torch.maximum: NaN wins, so a NaN moment is not silently dropped.
      if (v[i] > v_max[i] || std::isnan(v[i])) v_max[i] = v[i];
      second = v_max[i];
    }
    const T denom = std::sqrt(second) / bc2_sqrt + eps;
    p[i] = p[i] + (neg_step_size * m[i]) / denom;
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
  size_t index = 0;
  for (const Group& group : groups_) {
    for (const Parameter& p : group.params) {
      ParamState& st = states_[index++];
      if (!p.requires_grad()) continue;
      ensure_state(st, p);
      ++st.step;
      const AdamStep s{group.lr,     options_.betas[0],  options_.betas[1],
                       options_.eps, group.weight_decay, st.step,
                       decoupled_,   options_.amsgrad,   options_.maximize};
      dispatch_dtype(p.dtype(), [&]<class T>() {
        adam_update<T>(p.data<T>(), p.grad<T>(), static_cast<T*>(st.slots[0].data()),
                       static_cast<T*>(st.slots[1].data()), static_cast<T*>(st.slots[2].data()),
                       p.numel(), s);
      });
    }
  }
  ++steps_;
}

AdamW::AdamW(std::vector<Parameter> params, AdamWOptions options)
    : Adam("AdamW", one_group(std::move(params)), from_adamw(options), true) {}

AdamW::AdamW(std::vector<ParamGroup> groups, AdamWOptions options)
    : Adam("AdamW", std::move(groups), from_adamw(options), true) {}

}  // namespace tapegrad
