// torch.nn's activation and reshaping modules: each records its op in its own name scope.
#include <tapegrad/nn/activations.h>

#include <cmath>
#include <utility>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/op.h>
#include <tapegrad/graph/scope.h>
#include <tapegrad/nn/module_scope.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad::nn {

namespace {

// Throws Error naming the module and the option unless `value` is finite.
void check_finite(const char* kind, const std::string& name, const char* option, double value) {
  if (!std::isfinite(value)) {
    throw Error(std::string(kind) + " \"" + name + "\": " + option + " must be finite, got " +
                number_text(value));
  }
}

}  // namespace

Tensor ReLU::forward(const Tensor& x) const {
  return in_module_scope("ReLU", *this, x, [&] { return relu(x); });
}

LeakyReLU::LeakyReLU(double negative_slope, std::string name)
    : UnaryModule(std::move(name)), negative_slope_(negative_slope) {
  check_finite("LeakyReLU", this->name(), "negative_slope", negative_slope);
}

Tensor LeakyReLU::forward(const Tensor& x) const {
  return in_module_scope("LeakyReLU", *this, x, [&] { return leaky_relu(x, negative_slope_); });
}

ELU::ELU(double alpha, std::string name) : UnaryModule(std::move(name)), alpha_(alpha) {
  check_finite("ELU", this->name(), "alpha", alpha);
}

Tensor ELU::forward(const Tensor& x) const {
  return in_module_scope("ELU", *this, x, [&] { return elu(x, alpha_); });
}

Tensor SiLU::forward(const Tensor& x) const {
  return in_module_scope("SiLU", *this, x, [&] { return silu(x); });
}

Tensor Mish::forward(const Tensor& x) const {
  return in_module_scope("Mish", *this, x, [&] { return mish(x); });
}

Tensor Sigmoid::forward(const Tensor& x) const {
  return in_module_scope("Sigmoid", *this, x, [&] { return sigmoid(x); });
}

Tensor Tanh::forward(const Tensor& x) const {
  return in_module_scope("Tanh", *this, x, [&] { return tanh(x); });
}

Softplus::Softplus(double beta, double threshold, std::string name)
    : UnaryModule(std::move(name)), beta_(beta), threshold_(threshold) {
  check_finite("Softplus", this->name(), "beta", beta);
  check_finite("Softplus", this->name(), "threshold", threshold);
  if (beta == 0.0) throw Error("Softplus \"" + this->name() + "\": beta must not be 0");
}

Tensor Softplus::forward(const Tensor& x) const {
  return in_module_scope("Softplus", *this, x, [&] { return softplus(x, beta_, threshold_); });
}

Tensor Softmax::forward(const Tensor& x) const {
  return in_module_scope("Softmax", *this, x, [&] { return softmax(x, dim_); });
}

Tensor LogSoftmax::forward(const Tensor& x) const {
  return in_module_scope("LogSoftmax", *this, x, [&] { return log_softmax(x, dim_); });
}

Tensor Flatten::forward(const Tensor& x) const {
  return in_module_scope("Flatten", *this, x, [&] { return flatten(x, start_dim_, end_dim_); });
}

Unflatten::Unflatten(int dim, std::vector<int64_t> sizes, std::string name)
    : UnaryModule(std::move(name)), dim_(dim), sizes_(std::move(sizes)) {
  if (sizes_.empty()) throw Error("Unflatten \"" + this->name() + "\": sizes is empty");
  for (const int64_t s : sizes_) {
    if (s < 1 && s != -1) {
      throw Error("Unflatten \"" + this->name() + "\": sizes holds " + std::to_string(s) +
                  " (each size must be >= 1, or -1 once)");
    }
  }
}

Tensor Unflatten::forward(const Tensor& x) const {
  return in_module_scope("Unflatten", *this, x, [&] { return unflatten(x, dim_, sizes_); });
}

}  // namespace tapegrad::nn
