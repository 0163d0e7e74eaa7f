// torch.nn's pooling and resampling modules: each records its op in its own name scope.
#include <tapegrad/nn/pooling.h>

#include <utility>

#include <tapegrad/nn/module_scope.h>

namespace tapegrad::nn {

MaxPool2d::MaxPool2d(Size2 kernel_size, std::optional<Size2> stride, Size2 padding, Size2 dilation,
                     bool ceil_mode, std::string name)
    : UnaryModule(std::move(name)),
      kernel_size_(kernel_size),
      stride_(stride),
      padding_(padding),
      dilation_(dilation),
      ceil_mode_(ceil_mode) {}

Tensor MaxPool2d::forward(const Tensor& x) const {
  return in_module_scope("MaxPool2d", *this, x, [&] {
    return max_pool2d(x, kernel_size_, stride_, padding_, dilation_, ceil_mode_);
  });
}

MaxPool1d::MaxPool1d(int64_t kernel_size, std::optional<int64_t> stride, int64_t padding,
                     int64_t dilation, bool ceil_mode, std::string name)
    : UnaryModule(std::move(name)),
      kernel_size_(kernel_size),
      stride_(stride),
      padding_(padding),
      dilation_(dilation),
      ceil_mode_(ceil_mode) {}

Tensor MaxPool1d::forward(const Tensor& x) const {
  return in_module_scope("MaxPool1d", *this, x, [&] {
    return max_pool1d(x, kernel_size_, stride_, padding_, dilation_, ceil_mode_);
  });
}

AvgPool2d::AvgPool2d(Size2 kernel_size, std::optional<Size2> stride, Size2 padding, bool ceil_mode,
                     bool count_include_pad, std::optional<int64_t> divisor_override,
                     std::string name)
    : UnaryModule(std::move(name)),
      kernel_size_(kernel_size),
      stride_(stride),
      padding_(padding),
      ceil_mode_(ceil_mode),
      count_include_pad_(count_include_pad),
      divisor_override_(divisor_override) {}

Tensor AvgPool2d::forward(const Tensor& x) const {
  return in_module_scope("AvgPool2d", *this, x, [&] {
    return avg_pool2d(x, kernel_size_, stride_, padding_, ceil_mode_, count_include_pad_,
                      divisor_override_);
  });
}

AvgPool1d::AvgPool1d(int64_t kernel_size, std::optional<int64_t> stride, int64_t padding,
                     bool ceil_mode, bool count_include_pad, std::string name)
    : UnaryModule(std::move(name)),
      kernel_size_(kernel_size),
      stride_(stride),
      padding_(padding),
      ceil_mode_(ceil_mode),
      count_include_pad_(count_include_pad) {}

Tensor AvgPool1d::forward(const Tensor& x) const {
  return in_module_scope("AvgPool1d", *this, x, [&] {
    return avg_pool1d(x, kernel_size_, stride_, padding_, ceil_mode_, count_include_pad_);
  });
}

Tensor AdaptiveAvgPool2d::forward(const Tensor& x) const {
  return in_module_scope("AdaptiveAvgPool2d", *this, x,
                         [&] { return adaptive_avg_pool2d(x, output_size_); });
}

Tensor AdaptiveMaxPool2d::forward(const Tensor& x) const {
  return in_module_scope("AdaptiveMaxPool2d", *this, x,
                         [&] { return adaptive_max_pool2d(x, output_size_); });
}

Tensor Upsample::forward(const Tensor& x) const {
  return in_module_scope("Upsample", *this, x, [&] { return interpolate(x, options_); });
}

}  // namespace tapegrad::nn
