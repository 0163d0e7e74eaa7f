// nn::Linear: torch.nn.Linear (y = x·Wᵀ + b) with torch's initialisation from a Generator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/parameter.h"
#include "graph/tape.h"
#include "ops/ops.h"

namespace tapegrad::nn {

// A fully connected layer in torch's layout: weight [out_features, in_features] and an optional
// bias [out_features]. The constructor draws the weight, then the bias, as nn.Linear's
// reset_parameters does (kaiming_uniform_(a=√5) for the weight, U(-1/√in, 1/√in) for the bias:
// both bounds are 1/√in up to torch's rounding), so after the same manual_seed the same layers
// built in the same order hold torch's values bit for bit (graph/random.h has the arithmetic).
//
// The parameters are named "<name>.weight" and "<name>.bias" (the name the owning module gives
// the layer, e.g. "W_query"), and forward records inside NameScope(name), so a drawing of the
// tape puts each layer's weight and its `linear` op in one box.
class Linear {
 public:
  Linear() = default;
  Linear(int64_t in_features, int64_t out_features, bool bias = true, DType dtype = DType::Float32,
         std::string name = "Linear", Generator& generator = default_generator());

  // x [.., in_features] -> [.., out_features].
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }

  // weight, then bias when there is one (torch's named_parameters order).
  std::vector<Parameter> parameters() const;

  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  const std::string& name() const { return name_; }
  bool has_bias() const { return bias.defined(); }

  Parameter weight;  // [out_features, in_features]
  Parameter bias;    // [out_features]; undefined when built with bias = false

 private:
  int64_t in_features_ = 0;
  int64_t out_features_ = 0;
  std::string name_;
};

}  // namespace tapegrad::nn
