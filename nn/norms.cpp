// torch.nn.GroupNorm, BatchNorm1d and BatchNorm2d (nn/norms.h).
#include <tapegrad/nn/norms.h>

#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/scope.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad::nn {

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
