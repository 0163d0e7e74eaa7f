// SGD: the update p -= lr * grad over each parameter's storage, in its dtype.
#include "optim/sgd.h"

#include <cmath>
#include <string>

#include "graph/error.h"

namespace tapegrad {

namespace {

void check_lr(double lr) {
  if (!std::isfinite(lr) || lr < 0.0) {
    throw Error("SGD: invalid learning rate " + std::to_string(lr) + " (must be finite and >= 0)");
  }
}

// torch's add_(grad, alpha=-lr): alpha is converted to the parameter's dtype first.
template <class T>
void update(T* value, const T* grad, int64_t n, double lr) {
  const T alpha = static_cast<T>(-lr);
  for (int64_t i = 0; i < n; ++i) value[i] += alpha * grad[i];
}

}  // namespace

SGD::SGD(std::vector<Parameter> params, double lr) : params_(std::move(params)), lr_(lr) {
  check_lr(lr);
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].defined()) {
      throw Error("SGD: parameter " + std::to_string(i) + " is undefined (default-constructed)");
    }
  }
}

void SGD::set_lr(double lr) {
  check_lr(lr);
  lr_ = lr;
}

void SGD::step() {
  for (const Parameter& p : params_) {
    if (!p.requires_grad()) continue;
    if (p.dtype() == DType::Float32) {
      update(p.data<float>(), p.grad<float>(), p.numel(), lr_);
    } else {
      update(p.data<double>(), p.grad<double>(), p.numel(), lr_);
    }
  }
}

void SGD::zero_grad() {
  for (const Parameter& p : params_) p.zero_grad();
}

}  // namespace tapegrad
