// torch.nn's normalisation modules beyond the book's LayerNorm (nn/layers.h): GroupNorm, with
// torch's names (weight, bias), constructor arguments, defaults and initialisation.
#pragma once

#include <cstdint>
#include <string>

#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/nn/module.h>

namespace tapegrad::nn {

// torch.nn.GroupNorm(num_groups, num_channels, eps = 1e-5, affine = true): the channels of an
// input [N, C, *] split into num_groups groups, each normalised over its channels and the
// spatial dims (the group_norm op), then weight [C] (ones) and bias [C] (zeros) per channel when
// affine. num_groups must divide num_channels (Error when built); an input whose dim 1 is not
// num_channels is an Error naming the module and the shapes. One cluster in drawings.
class GroupNorm : public UnaryModule {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true,
            DType dtype = DType::Float32, std::string name = "GroupNorm");
  Tensor forward(const Tensor& x) const override;  // [N, C, *] -> [N, C, *]

  int64_t num_groups() const { return num_groups_; }
  int64_t num_channels() const { return num_channels_; }
  double eps() const { return eps_; }
  bool affine() const { return weight.defined(); }

  Parameter weight;  // [C], ones (undefined without affine)
  Parameter bias;    // [C], zeros (undefined without affine)

 private:
  int64_t num_groups_, num_channels_;
  double eps_;
};

}  // namespace tapegrad::nn
