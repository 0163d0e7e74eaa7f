// nn::Linear: parameters drawn as torch.nn.Linear draws them, forward through the `linear` op.
#include "ops/nn/linear.h"

#include "graph/error.h"
#include "graph/random.h"

namespace tapegrad::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, DType dtype, std::string name,
               Generator& generator)
    : in_features_(in_features), out_features_(out_features), name_(std::move(name)) {
  if (in_features <= 0 || out_features <= 0) {
    throw Error("Linear \"" + name_ + "\": in_features " + std::to_string(in_features) +
                " and out_features " + std::to_string(out_features) + " must be positive");
  }
  weight = Parameter(Shape{out_features, in_features}, dtype, name_ + ".weight");  // [out, in]
  if (bias) this->bias = Parameter(Shape{out_features}, dtype, name_ + ".bias");   // [out]
  // reset_parameters: the whole weight, then the bias.
  if (dtype == DType::Float32) {
    linear_init_weight(weight.data<float>(), out_features, in_features, generator);
    if (bias) linear_init_bias(this->bias.data<float>(), out_features, in_features, generator);
  } else {
    linear_init_weight(weight.data<double>(), out_features, in_features, generator);
    if (bias) linear_init_bias(this->bias.data<double>(), out_features, in_features, generator);
  }
}

Tensor Linear::forward(const Tensor& x) const {
  NameScope scope(name_, x.tape());
  if (x.rank() < 1 || x.size(-1) != in_features_) {
    throw Error("Linear \"" + name_ + "\": input " + x.shape().str() + " must end in " +
                std::to_string(in_features_) + " features (weight " + weight.shape().str() + ")");
  }
  Tensor w = x.tape().parameter(weight);     // [out, in]
  if (!bias.defined()) return linear(x, w);  // [.., out]
  Tensor b = x.tape().parameter(bias);       // [out]
  return linear(x, w, b);                    // [.., out]
}

std::vector<Parameter> Linear::parameters() const {
  if (bias.defined()) return {weight, bias};
  return {weight};
}

}  // namespace tapegrad::nn
