// torch.nn's normalisation modules beyond the book's LayerNorm (nn/layers.h): torch's LayerNorm
// and RMSNorm (as TorchLayerNorm and TorchRMSNorm), GroupNorm, BatchNorm1d and BatchNorm2d, with
// torch's names (weight, bias, running_mean, running_var, num_batches_tracked), constructor
// arguments, defaults and initialisation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/nn/module.h>

namespace tapegrad::nn {

// torch.nn.LayerNorm(normalized_shape, eps = 1e-5, elementwise_affine = true, bias = true), with
// torch's parameter names weight (ones) and bias (zeros), each of normalized_shape. Named
// TorchLayerNorm because nn::LayerNorm is the book's (parameters scale and shift, which the GPT's
// state_dict and checkpoints use). The input's last dims must equal normalized_shape (Error naming
// the module and both shapes); they are normalised together (biased variance), then
// weight·x̂ + bias elementwise: the layer_norm op on the input viewed as [.., numel]. bias = false
// (torch 2.1's option) keeps the weight only. One cluster in drawings.
class TorchLayerNorm : public UnaryModule {
 public:
  explicit TorchLayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true,
                          bool bias = true, DType dtype = DType::Float32,
                          std::string name = "LayerNorm");
  // The last dim alone: TorchLayerNorm(8) is nn.LayerNorm(8).
  explicit TorchLayerNorm(int64_t normalized_shape, double eps = 1e-5,
                          bool elementwise_affine = true, bool bias = true,
                          DType dtype = DType::Float32, std::string name = "LayerNorm")
      : TorchLayerNorm(Shape{normalized_shape}, eps, elementwise_affine, bias, dtype,
                       std::move(name)) {}
  Tensor forward(const Tensor& x) const override;  // [.., *normalized_shape] -> the same

  const Shape& normalized_shape() const { return normalized_shape_; }
  double eps() const { return eps_; }
  bool elementwise_affine() const { return weight.defined(); }

  Parameter weight;  // normalized_shape, ones (undefined without elementwise_affine)
  Parameter bias;    // normalized_shape, zeros (undefined without elementwise_affine or bias)

 private:
  Shape normalized_shape_;
  double eps_;
};

// torch.nn.RMSNorm (torch 2.4; torch 1.13 has none) (normalized_shape, eps = None,
// elementwise_affine = true): x·rsqrt(mean(x², over the last dims) + eps)·weight, weight ones of
// normalized_shape (torch 2.4's numbers: no bias). eps nullopt is torch's None: the input dtype's
// machine epsilon (torch.finfo(x.dtype).eps: 2⁻²³ for float32, 2⁻⁵² for float64), chosen at each
// forward. The rms_norm op on the input viewed as [.., numel]. Named TorchRMSNorm because
// nn::RMSNorm is the book's Qwen3 one (parameter scale, nn/qwen3.h); llama3::RMSNorm is Llama 3's
// (eps given, one dim). One cluster in drawings.
class TorchRMSNorm : public UnaryModule {
 public:
  explicit TorchRMSNorm(Shape normalized_shape, std::optional<double> eps = std::nullopt,
                        bool elementwise_affine = true, DType dtype = DType::Float32,
                        std::string name = "RMSNorm");
  explicit TorchRMSNorm(int64_t normalized_shape, std::optional<double> eps = std::nullopt,
                        bool elementwise_affine = true, DType dtype = DType::Float32,
                        std::string name = "RMSNorm")
      : TorchRMSNorm(Shape{normalized_shape}, eps, elementwise_affine, dtype, std::move(name)) {}
  Tensor forward(const Tensor& x) const override;  // [.., *normalized_shape] -> the same

  const Shape& normalized_shape() const { return normalized_shape_; }
  std::optional<double> eps() const { return eps_; }
  bool elementwise_affine() const { return weight.defined(); }

  Parameter weight;  // normalized_shape, ones (undefined without elementwise_affine)

 private:
  Shape normalized_shape_;
  std::optional<double> eps_;
};

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

// torch.nn.BatchNorm1d / 2d (num_features, eps = 1e-5, momentum = 0.1, affine = true,
// track_running_stats = true): the batch_norm op per channel of [N, C] or [N, C, L] (1d) or
// [N, C, H, W] (2d). In training mode the batch's statistics normalise and, when tracked, the
// running statistics move by momentum (by 1/num_batches_tracked, a cumulative average, when
// momentum is nullopt); in eval mode the running statistics normalise (the batch's when they
// are not tracked). Buffers running_mean (zeros), running_var (ones) and num_batches_tracked (a
// float64 count: torch's int64 in files is read as float64, and torch's load_state_dict copies a
// float64 back into its int64) are in state_dict, not in parameters(). One cluster in drawings.
class BatchNorm : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) const override;  // [N, C, *] -> [N, C, *]

  int64_t num_features() const { return num_features_; }
  double eps() const { return eps_; }
  std::optional<double> momentum() const { return momentum_; }
  bool affine() const { return weight.defined(); }
  bool track_running_stats() const { return running_mean.defined(); }

  Parameter weight;               // [C], ones (undefined without affine)
  Parameter bias;                 // [C], zeros (undefined without affine)
  Parameter running_mean;         // [C], zeros (undefined without track_running_stats)
  Parameter running_var;          // [C], ones
  Parameter num_batches_tracked;  // [], float64, 0

 protected:
  BatchNorm(const char* kind, int64_t num_features, double eps, std::optional<double> momentum,
            bool affine, bool track_running_stats, DType dtype, std::string name);
  // "expected 2D or 3D input" when `rank` does not fit, "" when it does.
  virtual std::string rank_problem(int64_t rank) const = 0;

 private:
  const char* kind_;
  int64_t num_features_;
  double eps_;
  std::optional<double> momentum_;
};

class BatchNorm1d : public BatchNorm {
 public:
  explicit BatchNorm1d(int64_t num_features, double eps = 1e-5,
                       std::optional<double> momentum = 0.1, bool affine = true,
                       bool track_running_stats = true, DType dtype = DType::Float32,
                       std::string name = "BatchNorm1d")
      : BatchNorm("BatchNorm1d", num_features, eps, momentum, affine, track_running_stats, dtype,
                  std::move(name)) {}

 protected:
  std::string rank_problem(int64_t rank) const override;
};

class BatchNorm2d : public BatchNorm {
 public:
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5,
                       std::optional<double> momentum = 0.1, bool affine = true,
                       bool track_running_stats = true, DType dtype = DType::Float32,
                       std::string name = "BatchNorm2d")
      : BatchNorm("BatchNorm2d", num_features, eps, momentum, affine, track_running_stats, dtype,
                  std::move(name)) {}

 protected:
  std::string rank_problem(int64_t rank) const override;
};

}  // namespace tapegrad::nn
