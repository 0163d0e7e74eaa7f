// SGD: plain stochastic gradient descent over Parameters, as torch.optim.SGD without momentum.
#pragma once

#include <vector>

#include "graph/parameter.h"

namespace tapegrad {

// For each parameter that requires grad: p -= lr * p.grad, in the parameter's own dtype (torch's
// param.add_(grad, alpha=-lr)). The optimiser holds handles to the parameters (shared with the
// model), not copies. Gradients accumulate across backward passes until zero_grad(), as in torch:
// the usual step is zero_grad(), forward, backward, step().
class SGD {
 public:
  // Throws tapegrad::Error when lr is negative or not finite, or a parameter is undefined.
  SGD(std::vector<Parameter> params, double lr);

  void step();       // p -= lr * grad for every parameter that requires grad
  void zero_grad();  // sets every parameter's gradient to zero

  double lr() const { return lr_; }
  void set_lr(double lr);
  const std::vector<Parameter>& parameters() const { return params_; }

 private:
  std::vector<Parameter> params_;
  double lr_;
};

}  // namespace tapegrad
