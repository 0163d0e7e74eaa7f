// Learning-rate schedules with torch's own (partly recursive) formulas, in torch's operation
// order, so the lrs are bit-identical to torch.optim.lr_scheduler's.
#include <tapegrad/optim/schedule.h>

#include <cmath>
#include <numbers>
#include <string>
#include <utility>

#include <tapegrad/graph/error.h>
#include <tapegrad/optim/util.h>

// The arithmetic below is written out operation by operation to round where torch rounds (its
// Python-side scalars unfused, its CPU kernels' fused multiply-adds as explicit std::fma), so
// the compiler must not contract a*b + c on its own (GCC's default in C++ is to contract).
#pragma GCC optimize("fp-contract=off")

namespace tapegrad {

using optim_detail::format_number;

namespace {

constexpr double kPi = std::numbers::pi;  // Python's math.pi

[[noreturn]] void schedule_error(const char* name, const std::string& what) {
  throw Error(std::string(name) + ": " + what);
}

void check_nonnegative(const char* name, const char* what, double value) {
  if (!(std::isfinite(value) && value >= 0)) {
    schedule_error(name, std::string(what) + " must be >= 0, got " + format_number(value));
  }
}

void check_factor(const char* name, const char* what, double factor, bool allow_zero) {
  if (!((allow_zero ? factor >= 0.0 : factor > 0.0) && factor <= 1.0)) {
    schedule_error(name, std::string(what) + " must be in " + (allow_zero ? "[0, 1]" : "(0, 1]") +
                             ", got " + format_number(factor));
  }
}

// torch CosineAnnealingLR.get_lr at epoch `e` >= 1 from the previous lr (chainable form).
double cosine_recursive(int64_t e, int64_t t_max, double base, double eta_min, double last) {
  const double t = static_cast<double>(t_max);
  const int64_t period = 2 * t_max;
  if ((((e - 1 - t_max) % period) + period) % period == 0) {  // Python's % is never negative
    return last + (base - eta_min) * (1 - std::cos(kPi / t)) / 2;
  }
  return (1 + std::cos(kPi * static_cast<double>(e) / t)) /
             (1 + std::cos(kPi * static_cast<double>(e - 1) / t)) * (last - eta_min) +
         eta_min;
}

// torch LinearLR.get_lr at epoch `e` from the previous lr.
double linear_recursive(int64_t e, double start, double end, int64_t total, double last) {
  if (e == 0) return last * start;
  if (e > total) return last;
  return last * (1. + (end - start) / (static_cast<double>(total) * start +
                                       static_cast<double>(e - 1) * (end - start)));
}

LRFunction lambda_fn(std::function<double(int64_t)> factor) {
  if (!factor) schedule_error("LambdaLR", "the factor function is empty");
  return [factor = std::move(factor)](int64_t step, double base, double) {
    return base * factor(step);
  };
}

LRFunction step_fn(int64_t step_size, double gamma) {
  if (step_size < 1) {
    schedule_error("StepLR", "step_size must be >= 1, got " + std::to_string(step_size));
  }
  check_nonnegative("StepLR", "gamma", gamma);
  return [step_size, gamma](int64_t step, double, double last) {
    return step == 0 || step % step_size != 0 ? last : last * gamma;
  };
}

LRFunction linear_fn(double start, double end, int64_t total) {
  check_factor("LinearLR", "start_factor", start, /*allow_zero=*/false);
  check_factor("LinearLR", "end_factor", end, /*allow_zero=*/true);
  if (total < 1)
    schedule_error("LinearLR", "total_iters must be >= 1, got " + std::to_string(total));
  return [=](int64_t step, double, double last) {
    return linear_recursive(step, start, end, total, last);
  };
}

LRFunction cosine_fn(int64_t t_max, double eta_min) {
  if (t_max < 1) {
    schedule_error("CosineAnnealingLR", "T_max must be >= 1, got " + std::to_string(t_max));
  }
  check_nonnegative("CosineAnnealingLR", "eta_min", eta_min);
  return [=](int64_t step, double base, double last) {
    return step == 0 ? last : cosine_recursive(step, t_max, base, eta_min, last);
  };
}

LRFunction warmup_cosine_fn(int64_t warmup, int64_t total, double start, double eta_min) {
  const char* name = "WarmupCosineLR";
  if (warmup < 0) schedule_error(name, "warmup_steps must be >= 0, got " + std::to_string(warmup));
  if (total <= warmup) {
    schedule_error(name, "total_steps (" + std::to_string(total) +
                             ") must be greater than warmup_steps (" + std::to_string(warmup) +
                             ")");
  }
  check_factor(name, "start_factor", start, /*allow_zero=*/false);
  check_nonnegative(name, "eta_min", eta_min);
  const int64_t t_max = total - warmup;
  if (warmup == 0) return cosine_fn(t_max, eta_min);
  return [=](int64_t step, double base, double last) {
    // SequentialLR: at construction it resets the lr to base, then steps LinearLR; at the
    // milestone it calls CosineAnnealingLR.step(0), which takes the closed form at epoch 0.
    if (step == 0) return linear_recursive(0, start, 1.0, warmup, base);
    if (step < warmup) return linear_recursive(step, start, 1.0, warmup, last);
    if (step == warmup) return eta_min + (base - eta_min) * (1 + std::cos(0.0)) / 2;
    return cosine_recursive(step - warmup, t_max, base, eta_min, last);
  };
}

}  // namespace

LRScheduler::LRScheduler(Optimizer& optimizer, LRFunction lr_at)
    : optimizer_(&optimizer), lr_at_(std::move(lr_at)) {
  if (!lr_at_) throw Error("LRScheduler: the lr function is empty");
  base_lrs_.resize(optimizer.num_groups());
  for (size_t g = 0; g < optimizer.num_groups(); ++g) {
    base_lrs_[g] = optimizer.initial_lr(g).value_or(optimizer.lr(g));
  }
  check();  // before recording anything in the optimiser
  for (size_t g = 0; g < optimizer.num_groups(); ++g) {
    if (!optimizer.initial_lr(g)) optimizer.set_initial_lr(g, base_lrs_[g]);
  }
  apply();
}

LRScheduler::~LRScheduler() = default;

void LRScheduler::check() const {
  for (size_t g = 0; g < base_lrs_.size(); ++g) {
    const double lr = lr_at_(step_, base_lrs_[g], optimizer_->lr(g));
    if (!(std::isfinite(lr) && lr >= 0)) {
      throw Error("LRScheduler: step " + std::to_string(step_) + " gives group " +
                  std::to_string(g) + " the lr " + format_number(lr) + " (base lr " +
                  format_number(base_lrs_[g]) + "); an lr must be finite and >= 0");
    }
  }
}

void LRScheduler::apply() {
  for (size_t g = 0; g < base_lrs_.size(); ++g) {
    optimizer_->set_lr(g, lr_at_(step_, base_lrs_[g], optimizer_->lr(g)));
  }
}

void LRScheduler::step() {
  ++step_;
  try {
    check();
  } catch (...) {
    --step_;
    throw;
  }
  apply();
}

double LRScheduler::lr_at(int64_t step, double base_lr) const {
  double lr = base_lr;
  for (int64_t s = 0; s <= step; ++s) lr = lr_at_(s, base_lr, lr);
  return lr;
}

std::vector<double> LRScheduler::last_lr() const {
  std::vector<double> lrs(base_lrs_.size());
  for (size_t g = 0; g < lrs.size(); ++g) lrs[g] = optimizer_->lr(g);
  return lrs;
}

void LRScheduler::load_state(const SchedulerState& state) {
  if (state.base_lrs.size() != optimizer_->num_groups()) {
    const size_t groups = optimizer_->num_groups();
    throw Error("LRScheduler::load_state: the state has " + std::to_string(state.base_lrs.size()) +
                " base lrs but the optimizer has " + std::to_string(groups) +
                (groups == 1 ? " group" : " groups"));
  }
  if (state.step < 0) {
    throw Error("LRScheduler::load_state: step must be >= 0, got " + std::to_string(state.step));
  }
  std::vector<double> lrs(state.base_lrs.size());
  for (size_t g = 0; g < lrs.size(); ++g) {
    const double base = state.base_lrs[g];
    lrs[g] = lr_at(state.step, base);
    if (!(std::isfinite(base) && base >= 0 && std::isfinite(lrs[g]) && lrs[g] >= 0)) {
      throw Error("LRScheduler::load_state: group " + std::to_string(g) + " would get lr " +
                  format_number(lrs[g]) + " (base lr " + format_number(base) + ")");
    }
  }
  step_ = state.step;
  base_lrs_ = state.base_lrs;
  for (size_t g = 0; g < lrs.size(); ++g) optimizer_->set_lr(g, lrs[g]);
}

LambdaLR::LambdaLR(Optimizer& optimizer, std::function<double(int64_t)> factor)
    : LRScheduler(optimizer, lambda_fn(std::move(factor))) {}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer, step_fn(step_size, gamma)) {}

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor,
                   int64_t total_iters)
    : LRScheduler(optimizer, linear_fn(start_factor, end_factor, total_iters)) {}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer, cosine_fn(T_max, eta_min)) {}

WarmupCosineLR::WarmupCosineLR(Optimizer& optimizer, int64_t warmup_steps, int64_t total_steps,
                               double start_factor, double eta_min)
    : LRScheduler(optimizer, warmup_cosine_fn(warmup_steps, total_steps, start_factor, eta_min)) {}

}  // namespace tapegrad
