// SGD: stochastic gradient descent with momentum, dampening, Nesterov and weight decay, step for
// step equal to torch.optim.SGD (1.13, the default single-tensor path).
//
// Per parameter p with gradient g (maximize: g = -g), in p's dtype:
//     g = g + weight_decay·p                        (L2 penalty, when weight_decay != 0)
//     b = g                      on p's first step  (torch clones g: no dampening on step 1)
//     b = momentum·b + (1 - dampening)·g   later    (when momentum != 0)
//     g = g + momentum·b  (nesterov)  or  g = b     (when momentum != 0)
//     p = p - lr·g
// Each `x + a·y` is one fused multiply-add, as torch's CPU kernels compute it, so float32 and
// float64 runs match torch's bit for bit in the tested cases (tests/optim/test_sgd.cpp).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include <tapegrad/optim/optimizer.h>

namespace tapegrad {

struct SGDOptions {
  double lr = std::numeric_limits<double>::quiet_NaN();  // required, unless every group sets it
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;  // needs momentum > 0 and dampening == 0
  bool maximize = false;  // ascend instead of descend
};

class SGD : public Optimizer {
 public:
  // Throws Error naming "SGD" on: an empty parameter list, a parameter given twice, a negative
  // lr / momentum / weight decay, nesterov without momentum or with dampening.
  SGD(std::vector<Parameter> params, double lr);
  SGD(std::vector<Parameter> params, SGDOptions options);
  SGD(std::vector<ParamGroup> groups, SGDOptions options);

  void step() override;
  const SGDOptions& options() const { return options_; }

 private:
  // One parameter's share of step(): its buffers and group settings.
  struct Segment {
    void* param;
    const void* grad;
    double grad_scale;  // the gradient's pending clip coefficient (Parameter::grad_keeping_scale)
    void* buf;          // null without momentum
    int64_t n;
    DType dtype;
    bool first;  // the parameter's first step (torch starts the buffer as a copy of g)
    double lr, weight_decay;
  };
  SGDOptions options_;
  std::vector<Segment> segments_;  // rebuilt each step, its capacity kept (no allocation)
};

}  // namespace tapegrad
