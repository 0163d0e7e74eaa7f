// Learning-rate schedules: set each parameter group's lr as a function of the step, for any
// optimiser. Use like torch.optim.lr_scheduler: construct after the optimiser (this sets the
// step-0 lr), then call step() once after every optimizer.step():
//     AdamW opt(params, AdamWOptions{.lr = 4e-4, .weight_decay = 0.1});
//     WarmupCosineLR schedule(opt, /*warmup_steps=*/20, /*total_steps=*/100,
//                             /*start_factor=*/0.25, /*eta_min=*/1e-5);
//     for (...) { ...; opt.step(); schedule.step(); }
//
// Each schedule computes the lr with torch's own formulas, including the recursive ("chainable")
// ones that derive the new lr from the previous one, in torch's operation order, so the lrs are
// bit-identical to torch's (tests/optim/test_schedule.cpp). `base` is the group's lr when the
// first schedule was attached (torch's initial_lr). What each computes (in closed form), and the
// torch construction its golden comes from:
//   StepLR(step_size, gamma): base·gamma^⌊step/step_size⌋; torch StepLR.
//   LinearLR(start, end, total): base·(start + (end - start)·min(step, total)/total);
//     torch LinearLR.
//   CosineAnnealingLR(T_max, eta): eta + (base - eta)·(1 + cos(π·step/T_max))/2;
//     torch CosineAnnealingLR.
//   WarmupCosineLR(w, total, s, eta): LinearLR(s, 1, w) for step < w, then
//     CosineAnnealingLR(total - w, eta) over step - w; torch
//     SequentialLR([LinearLR(s, 1.0, total_iters=w),
//                   CosineAnnealingLR(T_max=total - w, eta_min=eta)], milestones=[w]).
//     This is the book's appendix-D warm-up + cosine, with initial_lr = s·peak, min_lr = eta.
//   LambdaLR(factor): base·factor(step); torch LambdaLR.
// Cosine schedules are periodic past T_max (as torch's), rising again; train for total steps.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <tapegrad/optim/optimizer.h>

namespace tapegrad {

// The lr of a group whose base lr is `base_lr` after `step` scheduler steps (0 = at start), given
// its lr `last_lr` before this step (torch's group['lr']; the recursive forms use it).
using LRFunction = std::function<double(int64_t step, double base_lr, double last_lr)>;

// What a checkpoint stores of a schedule (torch's last_epoch and base_lrs).
struct SchedulerState {
  int64_t step = 0;
  std::vector<double> base_lrs{};
};

class LRScheduler {
 public:
  // Takes each group's base lr (its initial_lr when a schedule already recorded one, else its
  // current lr, which is recorded as its initial_lr) and sets every group's lr to
  // lr_at(0, base, lr). The optimiser must outlive the scheduler. Throws Error, changing
  // nothing, when that gives a negative or non-finite lr.
  LRScheduler(Optimizer& optimizer, LRFunction lr_at);
  virtual ~LRScheduler();

  // Advances one step and sets every group's lr to lr_at(step, base, lr). Allocates nothing. Throws
  // Error, changing nothing, when the function gives a negative or non-finite lr.
  void step();
  int64_t last_step() const { return step_; }  // torch's last_epoch
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  std::vector<double> last_lr() const;  // every group's current lr (torch's get_last_lr())
  // The lr of a group with base lr `base_lr` after `step` steps from the start, as this schedule
  // produces it (replaying the recursion from step 0).
  double lr_at(int64_t step, double base_lr) const;
  Optimizer& optimizer() const { return *optimizer_; }

  SchedulerState state() const { return {step_, base_lrs_}; }
  // Restores step and base lrs and sets every group's lr to lr_at(step, base) (bit-identical to
  // an uninterrupted run). Throws Error, changing nothing, when the group count differs or a
  // value is invalid.
  void load_state(const SchedulerState& state);

 private:
  void check() const;  // throws Error unless every group's lr for step_ is finite and >= 0
  void apply();
  Optimizer* optimizer_;
  LRFunction lr_at_;
  std::vector<double> base_lrs_;
  int64_t step_ = 0;
};

// base_lr·factor(step): any schedule written as a function of the step.
class LambdaLR : public LRScheduler {
 public:
  LambdaLR(Optimizer& optimizer, std::function<double(int64_t step)> factor);
};

// Multiplies the lr by gamma every step_size steps (step_size >= 1, gamma >= 0).
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);
};

// From start_factor·base to end_factor·base linearly over total_iters steps, then constant
// (0 < start_factor <= 1, 0 <= end_factor <= 1, total_iters >= 1; torch 1.13 accepts
// start_factor 0 and then divides by zero).
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0,
           int64_t total_iters = 5);
};

// From base down to eta_min along half a cosine over T_max steps (T_max >= 1, eta_min >= 0).
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0.0);
};

// Linear warm-up from start_factor·base to base over warmup_steps, then cosine annealing from
// base to eta_min over the remaining total_steps - warmup_steps (0 <= warmup_steps <
// total_steps, 0 < start_factor <= 1, eta_min >= 0).
class WarmupCosineLR : public LRScheduler {
 public:
  WarmupCosineLR(Optimizer& optimizer, int64_t warmup_steps, int64_t total_steps,
                 double start_factor, double eta_min = 0.0);
};

}  // namespace tapegrad
