// torch.nn's activation and reshaping modules (ReLU, LeakyReLU, ELU, SiLU, Mish, Sigmoid, Tanh,
// Softplus, Softmax, LogSoftmax, Identity, Flatten, Unflatten): parameterless UnaryModules for
// nn::Sequential, with torch's names, constructor arguments and defaults.
//
// Each forward records its op inside NameScope(name()), so each is one cluster in a drawing
// (docs/drawings.md); Identity records nothing and returns its input, as torch's does. A bad
// argument found when the input arrives (a dim outside its rank, sizes that do not multiply to
// the dim's size) throws Error naming the module, the option and the input's shape. nn::GELU (the
// book's tanh approximation) is in nn/layers.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tapegrad/graph/tape.h>
#include <tapegrad/nn/module.h>

namespace tapegrad::nn {

class ReLU : public UnaryModule {
 public:
  explicit ReLU(std::string name = "ReLU") : UnaryModule(std::move(name)) {}
  Tensor forward(const Tensor& x) const override;  // [..] -> [..]
};

// x > 0 ? x : negative_slope·x. negative_slope must be finite (Error when built).
class LeakyReLU : public UnaryModule {
 public:
  explicit LeakyReLU(double negative_slope = 0.01, std::string name = "LeakyReLU");
  Tensor forward(const Tensor& x) const override;
  double negative_slope() const { return negative_slope_; }

 private:
  double negative_slope_;
};

// x > 0 ? x : alpha·(exp(x) − 1). alpha must be finite (Error when built).
class ELU : public UnaryModule {
 public:
  explicit ELU(double alpha = 1.0, std::string name = "ELU");
  Tensor forward(const Tensor& x) const override;
  double alpha() const { return alpha_; }

 private:
  double alpha_;
};

class SiLU : public UnaryModule {
 public:
  explicit SiLU(std::string name = "SiLU") : UnaryModule(std::move(name)) {}
  Tensor forward(const Tensor& x) const override;
};

class Mish : public UnaryModule {
 public:
  explicit Mish(std::string name = "Mish") : UnaryModule(std::move(name)) {}
  Tensor forward(const Tensor& x) const override;
};

class Sigmoid : public UnaryModule {
 public:
  explicit Sigmoid(std::string name = "Sigmoid") : UnaryModule(std::move(name)) {}
  Tensor forward(const Tensor& x) const override;
};

class Tanh : public UnaryModule {
 public:
  explicit Tanh(std::string name = "Tanh") : UnaryModule(std::move(name)) {}
  Tensor forward(const Tensor& x) const override;
};

// log(1 + exp(beta·x)) / beta, x itself where beta·x > threshold. beta must be finite and
// nonzero, threshold finite (Error when built).
class Softplus : public UnaryModule {
 public:
  explicit Softplus(double beta = 1.0, double threshold = 20.0, std::string name = "Softplus");
  Tensor forward(const Tensor& x) const override;
  double beta() const { return beta_; }
  double threshold() const { return threshold_; }

 private:
  double beta_;
  double threshold_;
};

// softmax along `dim` (torch's implicit dim=None, deprecated there, is not offered).
class Softmax : public UnaryModule {
 public:
  explicit Softmax(int dim, std::string name = "Softmax")
      : UnaryModule(std::move(name)), dim_(dim) {}
  Tensor forward(const Tensor& x) const override;
  int dim() const { return dim_; }

 private:
  int dim_;
};

class LogSoftmax : public UnaryModule {
 public:
  explicit LogSoftmax(int dim, std::string name = "LogSoftmax")
      : UnaryModule(std::move(name)), dim_(dim) {}
  Tensor forward(const Tensor& x) const override;
  int dim() const { return dim_; }

 private:
  int dim_;
};

// Returns x itself: no op recorded, nothing drawn.
class Identity : public UnaryModule {
 public:
  explicit Identity(std::string name = "Identity") : UnaryModule(std::move(name)) {}
  Tensor forward(const Tensor& x) const override { return x; }
};

// Dims start_dim..end_dim merged into one ([N, C, H, W] -> [N, C·H·W] by default: the batch dim
// is kept, unlike the flatten op's default start_dim 0).
class Flatten : public UnaryModule {
 public:
  explicit Flatten(int start_dim = 1, int end_dim = -1, std::string name = "Flatten")
      : UnaryModule(std::move(name)), start_dim_(start_dim), end_dim_(end_dim) {}
  Tensor forward(const Tensor& x) const override;
  int start_dim() const { return start_dim_; }
  int end_dim() const { return end_dim_; }

 private:
  int start_dim_;
  int end_dim_;
};

// Dim `dim` split into `sizes` (one may be -1, inferred). sizes must not be empty, and each must
// be >= 1 or -1 (Error when built).
class Unflatten : public UnaryModule {
 public:
  Unflatten(int dim, std::vector<int64_t> sizes, std::string name = "Unflatten");
  Tensor forward(const Tensor& x) const override;
  int dim() const { return dim_; }
  const std::vector<int64_t>& sizes() const { return sizes_; }

 private:
  int dim_;
  std::vector<int64_t> sizes_;
};

}  // namespace tapegrad::nn
