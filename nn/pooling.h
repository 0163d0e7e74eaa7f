// torch.nn's pooling and resampling modules (MaxPool1d, MaxPool2d, AvgPool1d, AvgPool2d,
// AdaptiveAvgPool2d, AdaptiveMaxPool2d, Upsample): parameterless UnaryModules for nn::Sequential,
// with torch's names, constructor arguments and defaults, over the ops of ops/pooling.h.
//
// Each forward records its op inside NameScope(name()), so each is one cluster in a drawing. A bad
// argument is found when the input arrives, as in torch: the op's Error, with the module's kind
// and name in front (`MaxPool2d "pool": max_pool2d: x [1, 1, 2, 2]: kernel_size ...`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <tapegrad/graph/tape.h>
#include <tapegrad/nn/module.h>
#include <tapegrad/ops/pooling.h>

namespace tapegrad::nn {

// stride: none means kernel_size, as torch's stride=None.
class MaxPool2d : public UnaryModule {
 public:
  explicit MaxPool2d(Size2 kernel_size, std::optional<Size2> stride = std::nullopt,
                     Size2 padding = 0, Size2 dilation = 1, bool ceil_mode = false,
                     std::string name = "MaxPool2d");
  Tensor forward(const Tensor& x) const override;  // [N, C, H, W] or [C, H, W]
  Size2 kernel_size() const { return kernel_size_; }
  Size2 stride() const { return stride_.value_or(kernel_size_); }

 private:
  Size2 kernel_size_;
  std::optional<Size2> stride_;
  Size2 padding_, dilation_;
  bool ceil_mode_;
};

class MaxPool1d : public UnaryModule {
 public:
  explicit MaxPool1d(int64_t kernel_size, std::optional<int64_t> stride = std::nullopt,
                     int64_t padding = 0, int64_t dilation = 1, bool ceil_mode = false,
                     std::string name = "MaxPool1d");
  Tensor forward(const Tensor& x) const override;  // [N, C, L] or [C, L]

 private:
  int64_t kernel_size_;
  std::optional<int64_t> stride_;
  int64_t padding_, dilation_;
  bool ceil_mode_;
};

class AvgPool2d : public UnaryModule {
 public:
  explicit AvgPool2d(Size2 kernel_size, std::optional<Size2> stride = std::nullopt,
                     Size2 padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                     std::optional<int64_t> divisor_override = std::nullopt,
                     std::string name = "AvgPool2d");
  Tensor forward(const Tensor& x) const override;

 private:
  Size2 kernel_size_;
  std::optional<Size2> stride_;
  Size2 padding_;
  bool ceil_mode_, count_include_pad_;
  std::optional<int64_t> divisor_override_;
};

class AvgPool1d : public UnaryModule {
 public:
  explicit AvgPool1d(int64_t kernel_size, std::optional<int64_t> stride = std::nullopt,
                     int64_t padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                     std::string name = "AvgPool1d");
  Tensor forward(const Tensor& x) const override;

 private:
  int64_t kernel_size_;
  std::optional<int64_t> stride_;
  int64_t padding_;
  bool ceil_mode_, count_include_pad_;
};

// output_size [OH, OW] (one number: square), as torch's; [N, C, H, W] -> [N, C, OH, OW].
class AdaptiveAvgPool2d : public UnaryModule {
 public:
  explicit AdaptiveAvgPool2d(Size2 output_size, std::string name = "AdaptiveAvgPool2d")
      : UnaryModule(std::move(name)), output_size_(output_size) {}
  Tensor forward(const Tensor& x) const override;
  Size2 output_size() const { return output_size_; }

 private:
  Size2 output_size_;
};

class AdaptiveMaxPool2d : public UnaryModule {
 public:
  explicit AdaptiveMaxPool2d(Size2 output_size, std::string name = "AdaptiveMaxPool2d")
      : UnaryModule(std::move(name)), output_size_(output_size) {}
  Tensor forward(const Tensor& x) const override;

 private:
  Size2 output_size_;
};

// torch.nn.Upsample: interpolate with fixed options (size or scale_factor, mode, align_corners).
class Upsample : public UnaryModule {
 public:
  explicit Upsample(InterpolateOptions options, std::string name = "Upsample")
      : UnaryModule(std::move(name)), options_(std::move(options)) {}
  Tensor forward(const Tensor& x) const override;  // [N, C, H, W]
  const InterpolateOptions& options() const { return options_; }

 private:
  InterpolateOptions options_;
};

}  // namespace tapegrad::nn
