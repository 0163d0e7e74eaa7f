// torch.nn's convolution layers, Conv1d, Conv2d, ConvTranspose1d and ConvTranspose2d, with
// torch's constructor arguments, defaults, parameter names and initialisation.
//
// Each constructor draws the weight with kaiming_uniform_(a = √5), then the bias from
// U(−1/√fan_in, 1/√fan_in), fan_in = weight.size(1)·kH·kW (nn/init.h's arithmetic), as torch's
// reset_parameters: after the same manual_seed, the same layers built in the same order hold
// torch's values bit for bit. Parameters are registered as "weight" and "bias" (torch's
// state_dict names). forward records inside NameScope(name()), one cluster in a drawing. Bad
// arguments throw Error naming the module when it is built; a bad input, the op's Error
// (ops.h's conv1d, conv2d, conv_transpose1d, conv_transpose2d) when it arrives.
//
// Conv1d and Conv2d take torch's padding_mode ("zeros", "reflect", "replicate", "circular"): a
// mode other than zeros pads the input with the pad op (PadMode) by the layer's padding (for
// "same": the total d·(k − 1) per dim, the smaller half first), then runs a valid convolution, as
// torch's _conv_forward. The constructors that take it put it after bias, as torch; the ones
// without it are padding_mode "zeros".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  // With torch's padding_mode; any other than the four is an Error naming the module.
  Conv2d(int64_t in_channels, int64_t out_channels, Size2 kernel_size, Size2 stride,
         ConvPadding padding, Size2 dilation, int64_t groups, bool bias,
         const std::string& padding_mode, DType dtype = DType::Float32, std::string name = "Conv2d",
         Generator& generator = default_generator());
  // [N, in_channels, H, W] (or unbatched) -> [N, out_channels, H_out, W_out].
  Tensor forward(const Tensor& x) const override;
  const std::string& padding_mode() const { return padding_mode_; }

  Parameter weight;
  Parameter bias;  // undefined when built with bias = false

 private:
  Size2 stride_, padding_, dilation_;
  bool same_ = false;  // padding "same" (else padding_, "valid" being 0)
  int64_t groups_;
  std::string padding_mode_ = "zeros";
  std::vector<int64_t>
      pads_;  // for a mode other than zeros: the pad op's {left, right, top, bottom}
};

// torch.nn.Conv1d: weight [out_channels, in_channels / groups, kernel_size], bias
// [out_channels]; padding a number, "valid" or "same".
class Conv1d : public UnaryModule {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1,
         ConvPadding padding = 0, int64_t dilation = 1, int64_t groups = 1, bool bias = true,
         DType dtype = DType::Float32, std::string name = "Conv1d",
         Generator& generator = default_generator());
  // With torch's padding_mode; any other than the four is an Error naming the module.
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride,
         ConvPadding padding, int64_t dilation, int64_t groups, bool bias,
         const std::string& padding_mode, DType dtype = DType::Float32, std::string name = "Conv1d",
         Generator& generator = default_generator());
  // [N, in_channels, L] (or unbatched) -> [N, out_channels, L_out].
  Tensor forward(const Tensor& x) const override;
  const std::string& padding_mode() const { return padding_mode_; }

  Parameter weight;
  Parameter bias;

 private:
  int64_t stride_, padding_, dilation_;
  bool same_ = false;
  int64_t groups_;
  std::string padding_mode_ = "zeros";
  std::vector<int64_t> pads_;  // for a mode other than zeros: the pad op's {left, right}
};

// torch.nn.ConvTranspose1d (in_channels, out_channels, kernel_size, stride = 1, padding = 0,
// output_padding = 0, groups = 1, bias = true, dilation = 1): weight [in_channels, out_channels /
// groups, kernel_size], bias [out_channels]; the conv_transpose1d op. torch's padding_mode is
// "zeros" only for transposed convolutions, so there is none here.
class ConvTranspose1d : public UnaryModule {
 public:
  ConvTranspose1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                  int64_t stride = 1, int64_t padding = 0, int64_t output_padding = 0,
                  int64_t groups = 1, bool bias = true, int64_t dilation = 1,
                  DType dtype = DType::Float32, std::string name = "ConvTranspose1d",
                  Generator& generator = default_generator());
  // [N, in_channels, L] (or unbatched) -> [N, out_channels, L_out].
  Tensor forward(const Tensor& x) const override;

  Parameter weight;
  Parameter bias;

 private:
  int64_t stride_, padding_, output_padding_, dilation_, groups_;
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
