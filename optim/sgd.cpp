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

namespace {

std::vector<ParamGroup> one_group(std::vector<Parameter> params) {
  std::vector<ParamGroup> groups(1);
  groups[0].params = std::move(params);
  return groups;
}

// torch casts each Python scalar to the parameter's dtype, and its add(x, y, alpha) kernel
// computes fma(y, alpha, x): the same roundings here.
template <class T>
void sgd_update(T* p, const T* grad, T* buf, int64_t n, bool first, double lr, double momentum,
                double dampening, double weight_decay, bool nesterov, bool maximize) {
  const T wd = static_cast<T>(weight_decay);
  const T mom = static_cast<T>(momentum);
  const T keep = static_cast<T>(1.0 - dampening);
  const T neg_lr = static_cast<T>(-lr);
  const bool decay = weight_decay != 0.0;
  const bool use_momentum = momentum != 0.0;
  for (int64_t i = 0; i < n; ++i) {
    T d = maximize ? -grad[i] : grad[i];
    if (decay) d = std::fma(p[i], wd, d);
    if (use_momentum) {
      buf[i] = first ? d : std::fma(d, keep, buf[i] * mom);
      d = nesterov ? std::fma(buf[i], mom, d) : buf[i];
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
        sgd_update<T>(p.data<T>(), p.grad<T>(), static_cast<T*>(st.slots[0].data()), p.numel(),
                      first, group.lr, options_.momentum, options_.dampening, group.weight_decay,
                      options_.nesterov, options_.maximize);
      });
      ++st.step;
    }
  }
  ++steps_;
}

}  // namespace tapegrad
