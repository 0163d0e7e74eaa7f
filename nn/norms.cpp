// torch.nn.GroupNorm (nn/norms.h).
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

}  // namespace tapegrad::nn
