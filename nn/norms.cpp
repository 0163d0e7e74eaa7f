// torch.nn.LayerNorm and RMSNorm (TorchLayerNorm, TorchRMSNorm), GroupNorm, BatchNorm1d and
// BatchNorm2d (nn/norms.h).
#include <tapegrad/nn/norms.h>

#include <limits>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/scope.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad::nn {

namespace {

// normalized_shape's checks, as torch's LayerNorm and RMSNorm make them when built.
void check_normalized_shape(const std::string& module, const Shape& shape) {
  bool positive = shape.rank() >= 1;
  for (int d = 0; d < shape.rank(); ++d) positive = positive && shape[d] > 0;
  if (!positive) {
    throw Error(module + ": normalized_shape " + shape.str() +
                " must have at least one dim, each positive");
  }
}

// The input viewed as [.., numel(normalized_shape)], after checking that its last dims are
// normalized_shape (torch's message names both shapes).
Tensor rows_of(const std::string& module, const Tensor& x, const Shape& normalized) {
  const int k = normalized.rank();
  bool fits = x.rank() >= k;
  for (int d = 1; fits && d <= k; ++d) fits = x.size(-d) == normalized.size(-d);
  if (!fits) {
    throw Error(module + ": given normalized_shape " + normalized.str() +
                ", expected an input ending in those dims, got " + x.shape().str());
  }
  if (k == 1) return x;
  std::vector<int64_t> dims(x.shape().dims().begin(), x.shape().dims().end() - k);
  dims.push_back(normalized.numel());
  return reshape(x, std::span<const int64_t>(dims));
}

// A parameter of normalized_shape as a row [numel] (a no-op for one dim).
Tensor flat(const Tensor& p) {
  if (p.rank() == 1) return p;
  return reshape(p, {p.numel()});
}

// The result back in the input's shape (a no-op for one normalised dim).
Tensor unrows(const Tensor& y, const Tensor& x) {
  if (y.rank() == x.rank()) return y;
  return reshape(y, x.shape().dims());
}

}  // namespace

TorchLayerNorm::TorchLayerNorm(Shape normalized_shape, double eps, bool elementwise_affine,
                               bool bias, DType dtype, std::string name)
    : UnaryModule(std::move(name)), normalized_shape_(normalized_shape), eps_(eps) {
  const std::string module = "LayerNorm \"" + this->name() + "\"";
  check_normalized_shape(module, normalized_shape);
  if (!(eps >= 0.0)) throw Error(module + ": eps " + std::to_string(eps) + " must be >= 0");
  if (!elementwise_affine) return;
  weight = Parameter(normalized_shape, dtype, "weight");  // ones
  weight.assign(std::vector<double>(static_cast<size_t>(normalized_shape.numel()), 1.0));
  register_parameter("weight", &TorchLayerNorm::weight);
  if (!bias) return;
  this->bias = Parameter(normalized_shape, dtype, "bias");  // zeros
  register_parameter("bias", &TorchLayerNorm::bias);
}

Tensor TorchLayerNorm::forward(const Tensor& x) const {
  Tape& tape = x.tape();
  NameScope scope(name(), tape);
  const Tensor rows = rows_of("LayerNorm \"" + name() + "\"", x, normalized_shape_);
  const Tensor w = weight.defined() ? flat(tape.parameter(weight)) : Tensor();
  const Tensor b = bias.defined() ? flat(tape.parameter(bias)) : Tensor();
  return unrows(layer_norm(rows, w, b, eps_), x);  // x's shape
}

TorchRMSNorm::TorchRMSNorm(Shape normalized_shape, std::optional<double> eps,
                           bool elementwise_affine, DType dtype, std::string name)
    : UnaryModule(std::move(name)), normalized_shape_(normalized_shape), eps_(eps) {
  const std::string module = "RMSNorm \"" + this->name() + "\"";
  check_normalized_shape(module, normalized_shape);
  if (eps && !(*eps >= 0.0)) {
    throw Error(module + ": eps " + std::to_string(*eps) + " must be >= 0");
  }
  if (!elementwise_affine) return;
  weight = Parameter(normalized_shape, dtype, "weight");  // ones
  weight.assign(std::vector<double>(static_cast<size_t>(normalized_shape.numel()), 1.0));
  register_parameter("weight", &TorchRMSNorm::weight);
}

Tensor TorchRMSNorm::forward(const Tensor& x) const {
  Tape& tape = x.tape();
  NameScope scope(name(), tape);
  const Tensor rows = rows_of("RMSNorm \"" + name() + "\"", x, normalized_shape_);
  // torch's eps=None: finfo(x.dtype).eps.
  const double eps =
      eps_.value_or(x.dtype() == DType::Float32 ? double(std::numeric_limits<float>::epsilon())
                                                : std::numeric_limits<double>::epsilon());
  const Tensor w = weight.defined() ? flat(tape.parameter(weight)) : Tensor();
  return unrows(rms_norm(rows, w, Tensor(), eps), x);  // x's shape
}

GroupNorm::GroupNorm(int64_t num_groups, int64_t num_channels, double eps, bool affine, DType dtype,
                     std::string name)
    : UnaryModule(std::move(name)),
      num_groups_(num_groups),
      num_channels_(num_channels),
      eps_(eps) {
  const std::string module = "GroupNorm \"" + this->name() + "\"";
  if (num_groups <= 0 || num_channels <= 0 || num_channels % num_groups != 0) {
    throw Error(module + ": num_groups " + std::to_string(num_groups) +
                " must be positive and divide num_channels " + std::to_string(num_channels));
  }
  if (!(eps >= 0.0)) throw Error(module + ": eps " + std::to_string(eps) + " must be >= 0");
  if (!affine) return;
  weight = Parameter(Shape{num_channels}, dtype, "weight");  // [C], ones
  bias = Parameter(Shape{num_channels}, dtype, "bias");      // [C], zeros
  weight.assign(std::vector<double>(static_cast<size_t>(num_channels), 1.0));
  register_parameter("weight", &GroupNorm::weight);
  register_parameter("bias", &GroupNorm::bias);
}

Tensor GroupNorm::forward(const Tensor& x) const {
  Tape& tape = x.tape();
  NameScope scope(name(), tape);
  if (x.rank() < 2 || x.size(1) != num_channels_) {
    throw Error("GroupNorm \"" + name() + "\": input " + x.shape().str() +
                " must be [N, num_channels = " + std::to_string(num_channels_) + ", *]");
  }
  if (!affine()) return group_norm(x, num_groups_, Tensor(), Tensor(), eps_);  // [N, C, *]
  return group_norm(x, num_groups_, tape.parameter(weight), tape.parameter(bias),
                    eps_);  // [N, C, *]
}

BatchNorm::BatchNorm(const char* kind, int64_t num_features, double eps,
                     std::optional<double> momentum, bool affine, bool track_running_stats,
                     DType dtype, std::string name)
    : UnaryModule(std::move(name)),
      kind_(kind),
      num_features_(num_features),
      eps_(eps),
      momentum_(momentum) {
  const std::string module = std::string(kind) + " \"" + this->name() + "\"";
  if (num_features <= 0) {
    throw Error(module + ": num_features " + std::to_string(num_features) + " must be positive");
  }
  if (!(eps >= 0.0)) throw Error(module + ": eps " + std::to_string(eps) + " must be >= 0");
  if (momentum && !(*momentum >= 0.0 && *momentum <= 1.0)) {
    throw Error(module + ": momentum " + std::to_string(*momentum) + " must be in [0, 1]");
  }
  const std::vector<double> ones(static_cast<size_t>(num_features), 1.0);
  if (affine) {
    weight = Parameter(Shape{num_features}, dtype, "weight");  // [C], ones
    bias = Parameter(Shape{num_features}, dtype, "bias");      // [C], zeros
    weight.assign(ones);
    register_parameter("weight", &BatchNorm::weight);
    register_parameter("bias", &BatchNorm::bias);
  }
  if (track_running_stats) {
    running_mean = Parameter(Shape{num_features}, dtype, "running_mean");             // [C], zeros
    running_var = Parameter(Shape{num_features}, dtype, "running_var");               // [C], ones
    num_batches_tracked = Parameter(Shape{}, DType::Float64, "num_batches_tracked");  // [], 0
    running_var.assign(ones);
    for (Parameter* p : {&running_mean, &running_var, &num_batches_tracked}) {
      p->set_requires_grad(false);
    }
    register_buffer("running_mean", &BatchNorm::running_mean);
    register_buffer("running_var", &BatchNorm::running_var);
    register_buffer("num_batches_tracked", &BatchNorm::num_batches_tracked);
  }
}

Tensor BatchNorm::forward(const Tensor& x) const {
  Tape& tape = x.tape();
  NameScope scope(name(), tape);
  const std::string module = std::string(kind_) + " \"" + name() + "\"";
  if (const std::string problem = rank_problem(x.rank()); !problem.empty()) {
    throw Error(module + ": " + problem + " (input " + x.shape().str() + ")");
  }
  if (x.size(1) != num_features_) {
    throw Error(module + ": input " + x.shape().str() + " has " + std::to_string(x.size(1)) +
                " channels in dim 1, num_features is " + std::to_string(num_features_));
  }
  // torch's exponential_average_factor: momentum, or 1/num_batches_tracked when it is None.
  // The count moves only once the op has accepted the input, so an Error changes no state.
  const bool track = training() && track_running_stats();
  double factor = momentum_.value_or(0.0);
  if (track && !momentum_) factor = 1.0 / (num_batches_tracked.data<double>()[0] + 1.0);
  // Eval without running statistics normalises by the batch's, as torch.
  const bool use_batch = training() || !track_running_stats();
  const Tensor w = affine() ? tape.parameter(weight) : Tensor();
  const Tensor b = affine() ? tape.parameter(bias) : Tensor();
  Tensor y = batch_norm(x, running_mean, running_var, w, b, use_batch, factor,
                        eps_);  // [N, C, *]
  if (track) num_batches_tracked.data<double>()[0] += 1.0;
  return y;
}

std::string BatchNorm1d::rank_problem(int64_t rank) const {
  if (rank == 2 || rank == 3) return "";
  return "expected 2D or 3D input (got " + std::to_string(rank) + "D input)";
}

std::string BatchNorm2d::rank_problem(int64_t rank) const {
  if (rank == 4) return "";
  return "expected 4D input (got " + std::to_string(rank) + "D input)";
}

}  // namespace tapegrad::nn
