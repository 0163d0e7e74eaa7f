// Optimizer: the base of SGD, Adam and AdamW: parameter groups, zero_grad, and saved state.
//
// Semantics follow torch.optim (1.13):
//  - Parameters are given as one list or as groups; each group has its own lr and weight decay
//    (unset fields take the optimiser's options), e.g. no decay on biases and layer-norm weights:
//        AdamW opt({ParamGroup{.params = {W_query, W_key, W_value}},
//                   ParamGroup{.params = {bias, norm_weight}, .weight_decay = 0.0}},
//                  AdamWOptions{.lr = 3e-4, .weight_decay = 0.1});
//  - step() skips parameters with requires_grad() == false or without a gradient (no backward
//    reached them yet: torch skips params whose .grad is None), and gives them no state. Every
//    other parameter is updated from its gradient (zero after zero_grad(), which keeps the
//    memory, like torch's zero_grad(set_to_none=False)).
//  - Per-parameter state (moments, momentum buffers) is allocated once, on the parameter's first
//    step, in the parameter's dtype; steady-state step() allocates nothing.
//
// Saved state (for checkpoints): state() returns, and load_state() restores,
//  - `optimizer`: "SGD", "Adam" or "AdamW", checked on load;
//  - `step`: how many times step() ran;
//  - scalars: "group.<g>.lr", "group.<g>.weight_decay" for every group g, "group.<g>.initial_lr"
//    when a schedule has recorded the group's base lr, and "param.<i>.step" (Adam/AdamW: the
//    parameter's own step count, as torch keeps one per parameter);
//  - tensors: "param.<i>.<slot>", in the parameter's shape and dtype, for every parameter that
//    has state; slots are "momentum_buffer" (SGD with momentum), "exp_avg", "exp_avg_sq" and
//    "max_exp_avg_sq" (Adam/AdamW, the last with amsgrad only).
// <i> counts parameters across groups in order (torch's state_dict numbering). Values are
// stored as doubles, which hold float32 and float64 exactly, so a restore is bit-exact.
// load_state validates everything first and throws Error without changing anything when the
// state does not fit this optimiser (other optimiser, group count, unknown or duplicate names,
// a shape or dtype that differs from the parameter's, a parameter with only some of its slots).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/shape.h>

namespace tapegrad {

// (The {} initializers let designated initializers leave fields out under -Wextra.)
struct ParamGroup {
  std::vector<Parameter> params{};
  std::optional<double> lr{};            // unset: the optimiser's options.lr
  std::optional<double> weight_decay{};  // unset: the optimiser's options.weight_decay
};

// One saved tensor of optimiser state (see the header comment for the names).
struct StateTensor {
  std::string name{};
  Shape shape{};
  DType dtype = DType::Float32;
  std::vector<double> values{};  // row-major, exact for both dtypes
};

struct StateScalar {
  std::string name{};
  double value = 0.0;
};

struct OptimizerState {
  std::string optimizer{};  // "SGD", "Adam", "AdamW"
  int64_t step = 0;         // step() calls so far
  std::vector<StateScalar> scalars{};
  std::vector<StateTensor> tensors{};

  const StateScalar* find_scalar(const std::string& name) const;
  const StateTensor* find_tensor(const std::string& name) const;
};

class Optimizer {
 public:
  virtual ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every trainable parameter from its current gradient.
  virtual void step() = 0;
  // Zeroes the gradient of every parameter given to this optimiser.
  void zero_grad();

  const std::string& name() const { return name_; }  // "SGD", "Adam", "AdamW"
  int64_t step_count() const { return steps_; }

  // --- groups (schedules set lr through these; a group index out of range throws Error) --------
  size_t num_groups() const { return groups_.size(); }
  const std::vector<Parameter>& params(size_t group) const;
  double lr(size_t group) const;
  void set_lr(size_t group, double lr);  // throws Error unless lr is finite and >= 0
  double weight_decay(size_t group) const;
  void set_weight_decay(size_t group, double weight_decay);
  // The lr a schedule treats as the group's base (torch's group['initial_lr']): set by the first
  // schedule attached, kept by later ones so they all start from the same base.
  std::optional<double> initial_lr(size_t group) const;
  void set_initial_lr(size_t group, double lr);
  // Every parameter, across groups, in order (the <i> of the saved state).
  std::vector<Parameter> parameters() const;

  // --- state ---------------------------------------------------------------------------------
  // Virtual for an optimiser whose state is spread over processes (dist::ShardedAdamW), which
  // refuses a local view of it rather than return part of it.
  virtual OptimizerState state() const;
  virtual void load_state(const OptimizerState& state);
  // How many state buffers were ever allocated: constant once every parameter has stepped.
  int64_t state_allocations() const { return state_allocations_; }

 protected:
  // Validates lr/weight decay (defaults and per group), the parameters (defined, none twice).
  Optimizer(std::string name, std::vector<ParamGroup> groups, double lr, double weight_decay);

  // What a subclass keeps per parameter: up to kMaxSlots buffers shaped like the parameter,
  // and (per_param_step) a step count. Called once, from the subclass's constructor.
  static constexpr int kMaxSlots = 3;
  void set_state_layout(std::vector<std::string> slot_names, bool per_param_step);

  struct Group {
    std::vector<Parameter> params;
    double lr = 0.0;
    double weight_decay = 0.0;
    std::optional<double> initial_lr;
  };
  struct ParamState {
    std::array<AlignedBuffer, kMaxSlots> slots;  // zeroed on allocation
    int64_t step = 0;
    bool initialized = false;  // false until the first step (torch: the state dict is empty)
  };

  const Group& group_at(size_t group) const;  // throws Error for a group that does not exist
  // Allocates the parameter's zeroed slot buffers unless it has them (first step only).
  void ensure_state(ParamState& state, const Parameter& p);
  // "parameter "W_query" [3, 4]", or "parameter #3 [3, 4]" when unnamed.
  static std::string describe_param(const Parameter& p, size_t index);
  [[noreturn]] void fail(const std::string& what) const;  // throws Error("<name>: <what>")

  std::vector<Group> groups_;
  std::vector<ParamState> states_;  // one per parameter, across groups in order
  int64_t steps_ = 0;

 private:
  std::string name_;
  std::vector<std::string> slot_names_;
  bool per_param_step_ = false;
  int64_t state_allocations_ = 0;
};

}  // namespace tapegrad
