// Adam and AdamW, step for step equal to torch.optim.Adam / AdamW (1.13, single-tensor path).
//
// Per parameter p with gradient g (maximize: g = -g) at its t-th step, in p's dtype:
//     Adam:   g = g + weight_decay·p                  (coupled: an L2 term in the gradient)
//     AdamW:  p = p·(1 - lr·weight_decay)             (decoupled, before the moments)
//     m = beta1·m + (1 - beta1)·g
//     v = beta2·v + (1 - beta2)·g²
//     v̂ = max(v̂, v)  with amsgrad, and then v̂ is used in place of v below
//     p = p - (lr / (1 - beta1^t)) · m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// The bias corrections are computed in double, like torch's Python; the rest in p's dtype with
// torch's roundings (x + a·y fused, as its CPU kernels do). step() is one pass over all
// parameters' elements, split over set_num_threads() threads; the result is the same bits for
// any thread count (the update is elementwise).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <tapegrad/optim/optimizer.h>

namespace tapegrad {

struct AdamOptions {
  double lr = 1e-3;
  std::array<double, 2> betas{0.9, 0.999};  // each in [0, 1)
  double eps = 1e-8;                        // > 0 (torch also allows 0)
  double weight_decay = 0.0;                // coupled (L2 in the gradient)
  bool amsgrad = false;
  bool maximize = false;
};

struct AdamWOptions {
  double lr = 1e-3;
  std::array<double, 2> betas{0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 1e-2;  // decoupled; torch's default
  bool amsgrad = false;
  bool maximize = false;
};

class Adam : public Optimizer {
 public:
  // Throws Error naming "Adam" on: an empty parameter list, a parameter given twice, a negative
  // lr or weight decay, betas outside [0, 1), eps <= 0.
  explicit Adam(std::vector<Parameter> params, AdamOptions options = {});
  explicit Adam(std::vector<ParamGroup> groups, AdamOptions options = {});

  ~Adam() override;
  void step() override;
  const AdamOptions& options() const { return options_; }
  bool decoupled_weight_decay() const { return decoupled_; }

 protected:
  Adam(const char* name, std::vector<ParamGroup> groups, const AdamOptions& options,
       bool decoupled);

 private:
  // One parameter's share of step() (adam.cpp: it holds the kernel's arguments, whose header is
  // not installed).
  struct Segment;

  AdamOptions options_;
  bool decoupled_;
  std::vector<Segment> segments_;  // rebuilt each step, its capacity kept (no allocation)
};

class AdamW : public Adam {
 public:
  // Throws Error naming "AdamW" on the same mistakes as Adam.
  explicit AdamW(std::vector<Parameter> params, AdamWOptions options = {});
  explicit AdamW(std::vector<ParamGroup> groups, AdamWOptions options = {});
};

}  // namespace tapegrad
