// SGD: torch.optim.SGD's single-tensor update, one fused, threaded pass over all parameters.
#include <tapegrad/optim/sgd.h>

#include <cmath>
#include <utility>

#include <tapegrad/kernels/optim/updates.h>
#include <tapegrad/optim/util.h>

namespace tapegrad {

using optim_detail::dispatch_dtype;
using optim_detail::for_all_elements;
using optim_detail::format_number;
using optim_detail::one_group;

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
  // First the per-parameter bookkeeping, then one (threaded) pass over all elements.
  segments_.clear();
  size_t index = 0;
  for (const Group& group : groups_) {
    for (const Parameter& p : group.params) {
      ParamState& st = states_[index++];
      if (!p.requires_grad() || !p.has_grad()) continue;  // torch: .grad is None
      const bool first = !st.initialized;
      ensure_state(st, p);
      ++st.step;
      if (p.numel() == 0) continue;
      segments_.push_back(Segment{.param = p.raw_data(),
                                  .grad = p.grad_keeping_scale(),
                                  .grad_scale = p.grad_scale(),
                                  .buf = st.slots[0].data(),
                                  .n = p.numel(),
                                  .dtype = p.dtype(),
                                  .first = first,
                                  .lr = group.lr,
                                  .weight_decay = group.weight_decay});
    }
  }
  for_all_elements(segments_, 6.0, [&](const Segment& seg, int64_t begin, int64_t end) {
    dispatch_dtype(seg.dtype, [&]<class T>() {
      T* buf = seg.buf != nullptr ? static_cast<T*>(seg.buf) + begin : nullptr;
      optim_kernels::sgd_update<T>(
          static_cast<T*>(seg.param) + begin, static_cast<const T*>(seg.grad) + begin,
          static_cast<T>(seg.grad_scale), buf, end - begin,
          {seg.lr, options_.momentum, options_.dampening, seg.weight_decay},
          {.maximize = options_.maximize,
           .decay = seg.weight_decay != 0.0,
           .momentum = options_.momentum != 0.0,
           .nesterov = options_.nesterov,
           .first = seg.first});
    });
  });
  ++steps_;
}

}  // namespace tapegrad
