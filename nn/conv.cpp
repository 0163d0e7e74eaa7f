// The convolution layers: their argument checks, torch's initialisation, and forwards that call
// the conv ops on the tape's views of the parameters.
#include <tapegrad/nn/conv.h>

#include <span>
#include <string_view>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/nn/init.h>

namespace tapegrad::nn {

namespace {

// What every layer checks when built, as torch's _ConvNd.__init__ does.
struct ConvLayerSpec {
  const char* kind;  // "Conv2d"
  const std::string& name;
  int64_t in_channels, out_channels, groups;
  Size2 kernel, stride, padding, dilation;

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(std::string(kind) + " \"" + name + "\": " + what);
  }
  void check() const {
    if (in_channels < 1 || out_channels < 1) {
      fail("in_channels " + std::to_string(in_channels) + " and out_channels " +
           std::to_string(out_channels) + " must be positive");
    }
    if (groups < 1 || in_channels % groups != 0 || out_channels % groups != 0) {
      fail("groups " + std::to_string(groups) + " must be positive and divide in_channels " +
           std::to_string(in_channels) + " and out_channels " + std::to_string(out_channels));
    }
    const auto at_least = [&](const char* what, Size2 v, int64_t least) {
      if (v.h < least || v.w < least) {
        fail(std::string(what) + " " + std::to_string(v.h) + "×" + std::to_string(v.w) +
             " must be at least " + std::to_string(least));
      }
    };
    at_least("kernel_size", kernel, 1);
    at_least("stride", stride, 1);
    at_least("dilation", dilation, 1);
    at_least("padding", padding, 0);
  }
};

// "" (numbers), "valid" or "same"; "same" needs stride 1 (torch refuses it when built).
bool padding_is_same(const ConvLayerSpec& spec, const ConvPadding& padding) {
  const std::string_view mode = padding.mode;
  if (mode.empty() || mode == "valid") return false;
  if (mode != "same") {
    spec.fail("padding \"" + std::string(mode) + "\" is not \"valid\", \"same\" or a number");
  }
  if (spec.stride.h != 1 || spec.stride.w != 1) {
    spec.fail("padding \"same\" is not supported for strided convolutions (as torch)");
  }
  return true;
}

// reset_parameters: the weight as [dim 0, fan_in] rows by kaiming_uniform_(a = √5), then the
// bias by U(−1/√fan_in, 1/√fan_in) — nn.Linear's draws (nn/init.h), with the weight's dims 1..
// flattened into fan_in.
void reset_parameters(Parameter& weight, Parameter& bias, Generator& generator) {
  const int64_t rows = weight.shape()[0], fan_in = weight.numel() / rows;
  if (weight.dtype() == DType::Float32) {
    linear_init_weight(weight.data<float>(), rows, fan_in, generator);
    if (bias.defined()) linear_init_bias(bias.data<float>(), bias.numel(), fan_in, generator);
  } else {
    linear_init_weight(weight.data<double>(), rows, fan_in, generator);
    if (bias.defined()) linear_init_bias(bias.data<double>(), bias.numel(), fan_in, generator);
  }
}

Tensor bias_of(const Tensor& x, const Parameter& bias) {
  return bias.defined() ? x.tape().parameter(bias) : Tensor();
}

// torch's padding_mode, checked when built ("zeros" pads inside the conv op).
PadMode pad_mode_of(const ConvLayerSpec& spec, const std::string& mode) {
  if (mode == "reflect") return PadMode::Reflect;
  if (mode == "replicate") return PadMode::Replicate;
  if (mode == "circular") return PadMode::Circular;
  if (mode != "zeros") {
    spec.fail(
        "padding_mode must be one of \"zeros\", \"reflect\", \"replicate\" or "
        "\"circular\", got \"" +
        mode + "\"");
  }
  return PadMode::Constant;
}

// torch's _reversed_padding_repeated_twice: {left, right} of the last dim, then of the one
// before (`dims` of them). "same" pads d·(k − 1) in all, the smaller half on the left.
std::vector<int64_t> reversed_pads(const ConvLayerSpec& spec, bool same, int dims) {
  std::vector<int64_t> pads;
  const auto add = [&](int64_t padding, int64_t kernel, int64_t dilation) {
    if (!same) {
      pads.insert(pads.end(), {padding, padding});
      return;
    }
    const int64_t total = dilation * (kernel - 1);
    pads.insert(pads.end(), {total / 2, total - total / 2});
  };
  add(spec.padding.w, spec.kernel.w, spec.dilation.w);
  if (dims == 2) add(spec.padding.h, spec.kernel.h, spec.dilation.h);
  return pads;
}

// The input padded by the pad op for a padding_mode other than zeros (no op when no side pads).
Tensor padded(const Tensor& x, const std::vector<int64_t>& pads, const std::string& mode) {
  bool any = false;
  for (const int64_t p : pads) any = any || p != 0;
  if (!any) return x;
  const PadMode m = mode == "reflect"     ? PadMode::Reflect
                    : mode == "replicate" ? PadMode::Replicate
                                          : PadMode::Circular;
  return pad(x, std::span<const int64_t>(pads), m);
}

}  // namespace

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, Size2 kernel_size, Size2 stride,
               ConvPadding padding, Size2 dilation, int64_t groups, bool bias, DType dtype,
               std::string name, Generator& generator)
    : Conv2d(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
             "zeros", dtype, std::move(name), generator) {}

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, Size2 kernel_size, Size2 stride,
               ConvPadding padding, Size2 dilation, int64_t groups, bool bias,
               const std::string& padding_mode, DType dtype, std::string name, Generator& generator)
    : UnaryModule(std::move(name)),
      stride_(stride),
      padding_(padding.size),
      dilation_(dilation),
      groups_(groups),
      padding_mode_(padding_mode) {
  const ConvLayerSpec spec{"Conv2d",    this->name(), in_channels,  out_channels, groups,
                           kernel_size, stride,       padding.size, dilation};
  spec.check();
  same_ = padding_is_same(spec, padding);
  if (pad_mode_of(spec, padding_mode) != PadMode::Constant) pads_ = reversed_pads(spec, same_, 2);
  weight = Parameter(Shape{out_channels, in_channels / groups, kernel_size.h, kernel_size.w}, dtype,
                     this->name() + ".weight");
  if (bias) this->bias = Parameter(Shape{out_channels}, dtype, this->name() + ".bias");
  reset_parameters(weight, this->bias, generator);
  register_parameter("weight", &Conv2d::weight);
  if (bias) register_parameter("bias", &Conv2d::bias);
}

Tensor Conv2d::forward(const Tensor& x) const {
  NameScope scope(name(), x.tape());
  const Tensor w = x.tape().parameter(weight);
  if (!pads_.empty()) {
    return conv2d(padded(x, pads_, padding_mode_), w, bias_of(x, bias), stride_, 0, dilation_,
                  groups_);
  }
  if (same_) return conv2d(x, w, bias_of(x, bias), stride_, "same", dilation_, groups_);
  return conv2d(x, w, bias_of(x, bias), stride_, {padding_.h, padding_.w}, dilation_, groups_);
}

Conv1d::Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride,
               ConvPadding padding, int64_t dilation, int64_t groups, bool bias, DType dtype,
               std::string name, Generator& generator)
    : Conv1d(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
             "zeros", dtype, std::move(name), generator) {}

Conv1d::Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride,
               ConvPadding padding, int64_t dilation, int64_t groups, bool bias,
               const std::string& padding_mode, DType dtype, std::string name, Generator& generator)
    : UnaryModule(std::move(name)),
      stride_(stride),
      padding_(padding.size.w),
      dilation_(dilation),
      groups_(groups),
      padding_mode_(padding_mode) {
  const ConvLayerSpec spec{"Conv1d",         this->name(), in_channels,   out_channels, groups,
                           {1, kernel_size}, {1, stride},  {0, padding_}, {1, dilation}};
  if (padding.pair) spec.fail("padding takes one number");
  spec.check();
  same_ = padding_is_same(spec, padding);
  if (pad_mode_of(spec, padding_mode) != PadMode::Constant) pads_ = reversed_pads(spec, same_, 1);
  weight = Parameter(Shape{out_channels, in_channels / groups, kernel_size}, dtype,
                     this->name() + ".weight");
  if (bias) this->bias = Parameter(Shape{out_channels}, dtype, this->name() + ".bias");
  reset_parameters(weight, this->bias, generator);
  register_parameter("weight", &Conv1d::weight);
  if (bias) register_parameter("bias", &Conv1d::bias);
}

Tensor Conv1d::forward(const Tensor& x) const {
  NameScope scope(name(), x.tape());
  const Tensor w = x.tape().parameter(weight);
  if (!pads_.empty()) {
    return conv1d(padded(x, pads_, padding_mode_), w, bias_of(x, bias), stride_, 0, dilation_,
                  groups_);
  }
  if (same_) return conv1d(x, w, bias_of(x, bias), stride_, "same", dilation_, groups_);
  return conv1d(x, w, bias_of(x, bias), stride_, padding_, dilation_, groups_);
}

ConvTranspose2d::ConvTranspose2d(int64_t in_channels, int64_t out_channels, Size2 kernel_size,
                                 Size2 stride, Size2 padding, Size2 output_padding, int64_t groups,
                                 bool bias, Size2 dilation, DType dtype, std::string name,
                                 Generator& generator)
    : UnaryModule(std::move(name)),
      stride_(stride),
      padding_(padding),
      output_padding_(output_padding),
      dilation_(dilation),
      groups_(groups) {
  const ConvLayerSpec spec{"ConvTranspose2d", this->name(), in_channels, out_channels, groups,
                           kernel_size,       stride,       padding,     dilation};
  spec.check();
  if (output_padding.h < 0 || output_padding.w < 0 ||
      (output_padding.h >= stride.h && output_padding.h >= dilation.h) ||
      (output_padding.w >= stride.w && output_padding.w >= dilation.w)) {
    spec.fail("output_padding " + std::to_string(output_padding.h) + "×" +
              std::to_string(output_padding.w) +
              " must be at least 0 and smaller than the stride or the dilation");
  }
  weight = Parameter(Shape{in_channels, out_channels / groups, kernel_size.h, kernel_size.w}, dtype,
                     this->name() + ".weight");
  if (bias) this->bias = Parameter(Shape{out_channels}, dtype, this->name() + ".bias");
  reset_parameters(weight, this->bias, generator);
  register_parameter("weight", &ConvTranspose2d::weight);
  if (bias) register_parameter("bias", &ConvTranspose2d::bias);
}

ConvTranspose1d::ConvTranspose1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                                 int64_t stride, int64_t padding, int64_t output_padding,
                                 int64_t groups, bool bias, int64_t dilation, DType dtype,
                                 std::string name, Generator& generator)
    : UnaryModule(std::move(name)),
      stride_(stride),
      padding_(padding),
      output_padding_(output_padding),
      dilation_(dilation),
      groups_(groups) {
  const ConvLayerSpec spec{"ConvTranspose1d", this->name(), in_channels,  out_channels, groups,
                           {1, kernel_size},  {1, stride},  {0, padding}, {1, dilation}};
  spec.check();
  if (output_padding < 0 || (output_padding >= stride && output_padding >= dilation)) {
    spec.fail("output_padding " + std::to_string(output_padding) +
              " must be at least 0 and smaller than the stride or the dilation");
  }
  weight = Parameter(Shape{in_channels, out_channels / groups, kernel_size}, dtype,
                     this->name() + ".weight");
  if (bias) this->bias = Parameter(Shape{out_channels}, dtype, this->name() + ".bias");
  reset_parameters(weight, this->bias, generator);
  register_parameter("weight", &ConvTranspose1d::weight);
  if (bias) register_parameter("bias", &ConvTranspose1d::bias);
}

Tensor ConvTranspose1d::forward(const Tensor& x) const {
  NameScope scope(name(), x.tape());
  return conv_transpose1d(x, x.tape().parameter(weight), bias_of(x, bias), stride_, padding_,
                          output_padding_, groups_, dilation_);
}

Tensor ConvTranspose2d::forward(const Tensor& x) const {
  NameScope scope(name(), x.tape());
  return conv_transpose2d(x, x.tape().parameter(weight), bias_of(x, bias), stride_, padding_,
                          output_padding_, groups_, dilation_);
}

}  // namespace tapegrad::nn
