// Adam and AdamW: torch.optim's single-tensor updates, one fused, threaded pass over all
// parameters.
#include <tapegrad/optim/adam.h>

#include <cmath>
#include <utility>

#include <tapegrad/kernels/optim/updates.h>
#include <tapegrad/optim/util.h>

namespace tapegrad {

using optim_detail::dispatch_dtype;
using optim_detail::for_all_elements;
using optim_detail::format_number;
using optim_detail::one_group;

namespace {

AdamOptions from_adamw(const AdamWOptions& o) {
  return AdamOptions{.lr = o.lr,
                     .betas = o.betas,
                     .eps = o.eps,
                     .weight_decay = o.weight_decay,
                     .amsgrad = o.amsgrad,
                     .maximize = o.maximize};
}

}  // namespace

// A parameter's buffers and its own hyper-parameters and step count.
struct Adam::Segment {
  void* param;
  const void* grad;
  double grad_scale;  // the gradient's pending clip coefficient (Parameter::grad_keeping_scale)
  void* m;
  void* v;
  void* v_max;  // null without amsgrad
  int64_t n;
  DType dtype;
  bool coupled_decay;
  optim_kernels::AdamScalars s;
};

Adam::~Adam() = default;

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
      segments_.push_back(
          Segment{.param = p.raw_data(),
                  .grad = p.grad_keeping_scale(),
                  .grad_scale = p.grad_scale(),
                  .m = st.slots[0].data(),
                  .v = st.slots[1].data(),
                  .v_max = st.slots[2].data(),  // null without amsgrad
                  .n = p.numel(),
                  .dtype = p.dtype(),
                  .coupled_decay = !decoupled_ && group.weight_decay != 0.0,
                  .s = optim_kernels::AdamScalars{group.lr, options_.betas[0], options_.betas[1],
                                                  options_.eps, group.weight_decay, st.step}});
    }
  }
  for_all_elements(segments_, 20.0, [&](const Segment& seg, int64_t begin, int64_t end) {
    dispatch_dtype(seg.dtype, [&]<class T>() {
      T* v_max = seg.v_max != nullptr ? static_cast<T*>(seg.v_max) + begin : nullptr;
      optim_kernels::adam_update<T>(static_cast<T*>(seg.param) + begin,
                                    static_cast<const T*>(seg.grad) + begin,
                                    static_cast<T>(seg.grad_scale), static_cast<T*>(seg.m) + begin,
                                    static_cast<T*>(seg.v) + begin, v_max, end - begin, seg.s,
                                    {.maximize = options_.maximize,
                                     .decoupled = decoupled_,
                                     .coupled_decay = seg.coupled_decay,
                                     .amsgrad = options_.amsgrad});
    });
  });
  ++steps_;
}

AdamW::AdamW(std::vector<Parameter> params, AdamWOptions options)
    : Adam("AdamW", one_group(std::move(params)), from_adamw(options), true) {}

AdamW::AdamW(std::vector<ParamGroup> groups, AdamWOptions options)
    : Adam("AdamW", std::move(groups), from_adamw(options), true) {}

}  // namespace tapegrad
