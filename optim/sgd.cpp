// SGD: torch.optim.SGD's single-tensor update, one fused loop per parameter.
#include "optim/sgd.h"

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
using optim_detail::one_group;
using optim_detail::with_flags;

namespace {

// torch casts each Python scalar to the parameter's dtype, and its add(x, y, alpha) kernel
// computes fma(y, alpha, x): the same roundings here. The flags are template arguments so the
// loop has no branches and vectorizes.
template <class T, bool kMaximize, bool kDecay, bool kMomentum, bool kNesterov, bool kFirst>
void sgd_loop(T* __restrict p, const T* __restrict grad, T* __restrict buf, int64_t n, double lr,
              double momentum, double dampening, double weight_decay) {
  const T wd = static_cast<T>(weight_decay);
  const T mom = static_cast<T>(momentum);
  const T keep = static_cast<T>(1.0 - dampening);
  const T neg_lr = static_cast<T>(-lr);
  for (int64_t i = 0; i < n; ++i) {
    T d = kMaximize ? -grad[i] : grad[i];
    if constexpr (kDecay) d = std::fma(p[i], wd, d);
    if constexpr (kMomentum) {
      const T b = kFirst ? d : std::fma(d, keep, buf[i] * mom);  // torch clones g on step 1
      buf[i] = b;
      d = kNesterov ? std::fma(b, mom, d) : b;
    }
    p[i] = std::fma(d, neg_lr, p[i]);
  }
}

}  // namespace

SGD::SGD(std::vector<Parameter> params, double lr)
    : SGD(one_group(std::move(params)), SGDOptions{.lr = lr}) {}

SGD::SGD(std::vector<Parameter> params, SGDOptions options)
    : SGD(one_group(std::move(params)), options) {}

SGD::SGD(std::vector<ParamGroup> groups, SGDOptions options)
    : Optimizer("SGD", std::move(groups), options.lr, options.weight_decay), options_(options) {
  if (!(std::isfinite(options.momentum) && options.momentum >= 0)) {
    fail("momentum must be >= 0, got " + format_number(options.momentum));
  }
  if (!std::isfinite(options.dampening)) {
    fail("dampening must be finite, got " + format_number(options.dampening));
  }
  if (options.nesterov && (options.momentum <= 0 || options.dampening != 0)) {
    fail("nesterov momentum requires a momentum > 0 and zero dampening (got momentum " +
         format_number(options.momentum) + ", dampening " + format_number(options.dampening) + ")");
  }
  if (options.momentum != 0) {
    set_state_layout({"momentum_buffer"}, /*per_param_step=*/false);
  } else {
    set_state_layout({}, /*per_param_step=*/false);
  }
}

void SGD::step() {
  size_t index = 0;
  for (const Group& group : groups_) {
    for (const Parameter& p : group.params) {
      ParamState& st = states_[index++];
      if (!p.requires_grad()) continue;
      const bool first = !st.initialized;
      ensure_state(st, p);
      dispatch_dtype(p.dtype(), [&]<class T>() {
        T* buf = static_cast<T*>(st.slots[0].data());  // null without momentum
        with_flags(
            [&]<bool kMaximize, bool kDecay, bool kMomentum, bool kNesterov, bool kFirst>() {
              sgd_loop<T, kMaximize, kDecay, kMomentum, kNesterov, kFirst>(
                  p.data<T>(), p.grad<T>(), buf, p.numel(), group.lr, options_.momentum,
                  options_.dampening, group.weight_decay);
            },
            options_.maximize, group.weight_decay != 0.0, options_.momentum != 0.0,
            options_.nesterov, first);
      });
      ++st.step;
    }
  }
  ++steps_;
}

}  // namespace tapegrad
