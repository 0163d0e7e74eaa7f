// torch.nn's convolution layers, Conv1d, Conv2d and ConvTranspose2d, with torch's constructor
// arguments, defaults, parameter names and initialisation.
//
// Each constructor draws the weight with kaiming_uniform_(a = √5), then the bias from
// U(−1/√fan_in, 1/√fan_in), fan_in = weight.size(1)·kH·kW (nn/init.h's arithmetic), as torch's
// reset_parameters: after the same manual_seed, the same layers built in the same order hold
// torch's values bit for bit. Parameters are registered as "weight" and "bias" (torch's
// state_dict names). forward records inside NameScope(name()), one cluster in a drawing. Bad
// arguments throw Error naming the module when it is built; a bad input, the op's Error
// (ops.h's conv1d, conv2d, conv_transpose2d) when it arrives.
#pragma once

#include <cstdint>
#include <string>

#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/nn/module.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad::nn {

// torch.nn.Conv2d: weight [out_channels, in_channels / groups, kH, kW], bias [out_channels].
// padding: numbers, or "valid" / "same" (the latter with stride 1 only, as torch).
class Conv2d : public UnaryModule {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, Size2 kernel_size, Size2 stride = 1,
         ConvPadding padding = 0, Size2 dilation = 1, int64_t groups = 1, bool bias = true,
         DType dtype = DType::Float32, std::string name = "Conv2d",
         Generator& generator = default_generator());
  // [N, in_channels, H, W] (or unbatched) -> [N, out_channels, H_out, W_out].
  Tensor forward(const Tensor& x) const override;

  Parameter weight;
  Parameter bias;  // undefined when built with bias = false

 private:
  Size2 stride_, padding_, dilation_;
  bool same_ = false;  // padding "same" (else padding_, "valid" being 0)
  int64_t groups_;
};

// torch.nn.Conv1d: weight [out_channels, in_channels / groups, kernel_size], bias
// [out_channels]; padding a number, "valid" or "same".
class Conv1d : public UnaryModule {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1,
         ConvPadding padding = 0, int64_t dilation = 1, int64_t groups = 1, bool bias = true,
         DType dtype = DType::Float32, std::string name = "Conv1d",
         Generator& generator = default_generator());
  // [N, in_channels, L] (or unbatched) -> [N, out_channels, L_out].
  Tensor forward(const Tensor& x) const override;

  Parameter weight;
  Parameter bias;

 private:
  int64_t stride_, padding_, dilation_;
  bool same_ = false;
  int64_t groups_;
};

// torch.nn.ConvTranspose2d (torch's argument order: output_padding and groups before bias,
// dilation last): weight [in_channels, out_channels / groups, kH, kW], bias [out_channels].
class ConvTranspose2d : public UnaryModule {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, Size2 kernel_size, Size2 stride = 1,
                  Size2 padding = 0, Size2 output_padding = 0, int64_t groups = 1, bool bias = true,
                  Size2 dilation = 1, DType dtype = DType::Float32,
                  std::string name = "ConvTranspose2d", Generator& generator = default_generator());
  // [N, in_channels, H, W] (or unbatched) -> [N, out_channels, H_out, W_out].
  Tensor forward(const Tensor& x) const override;

  Parameter weight;
  Parameter bias;

 private:
  Size2 stride_, padding_, output_padding_, dilation_;
  int64_t groups_;
};

}  // namespace tapegrad::nn
