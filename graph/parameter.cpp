// Parameter: persistent weights and their gradients in aligned storage.
#include <tapegrad/graph/parameter.h>

#include <cmath>
#include <cstring>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/threads.h>

namespace tapegrad {

Parameter::Parameter(const Shape& shape, DType dtype, std::string name)
    : impl_(std::make_shared<ParameterImpl>()) {
  impl_->shape = shape;
  impl_->dtype = dtype;
  impl_->name = std::move(name);
  const size_t bytes = static_cast<size_t>(shape.numel() * dtype_size(dtype));
  impl_->value = AlignedBuffer(bytes);
}

namespace {
// The multiply clip_grad_norm_ defers: torch's g.mul_(clip_coef_clamped), in the dtype.
template <class T>
void scale_in_place(void* data, double scale, int64_t n) {
  T* g = static_cast<T*>(data);
  parallel_for(n, 1.0, [&](int, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) g[i] = g[i] * static_cast<T>(scale);
  });
}
}  // namespace

void* ParameterImpl::grad_data(bool keep_scale) {
  if (grad.data() == nullptr) grad = AlignedBuffer(value.bytes());
  if (grad_zero_) std::memset(grad.data(), 0, grad.bytes());
  grad_zero_ = false;
  if (grad_scale_ != 1.0 && !keep_scale) {  // (NaN too)
    if (dtype == DType::Float32) scale_in_place<float>(grad.data(), grad_scale_, shape.numel());
    if (dtype == DType::Float64) scale_in_place<double>(grad.data(), grad_scale_, shape.numel());
    grad_scale_ = 1.0;
  }
  return grad.data();
}

bool ParameterImpl::take_zero_grad() {
  const bool zero = grad.data() == nullptr || grad_zero_;  // (zero_grad resets the scale)
  if (grad.data() == nullptr) grad = AlignedBuffer(value.bytes(), /*zeroed=*/false);
  grad_zero_ = false;
  return zero;
}

void ParameterImpl::scale_grad(double scale) {
  if (grad_zero_ && scale >= 0 && std::isfinite(scale)) return;  // fl(0·scale) = +0: still zero
  grad_data();  // a zero, or an earlier scale, first: each multiply rounds as torch's does
  grad_scale_ = scale;
}

Parameter Parameter::from_values(const Shape& shape, std::span<const double> values, DType dtype,
                                 std::string name) {
  Parameter p(shape, dtype, std::move(name));
  p.assign(values);
  return p;
}

ParameterImpl& Parameter::impl() const {
  if (!impl_) throw Error("Parameter: used before it was given a shape (default-constructed)");
  return *impl_;
}

void Parameter::check_dtype(DType requested) const {
  raw_data();  // throws once released
  if (requested != impl().dtype) {
    throw Error("Parameter \"" + impl().name + "\" " + impl().shape.str() + ": is " +
                dtype_name(impl().dtype) + ", accessed as " + dtype_name(requested));
  }
}

void* Parameter::raw_data() const {
  if (!impl().released.empty()) {
    throw Error("Parameter \"" + impl().name + "\" " + impl().shape.str() + ": " + impl().released);
  }
  return impl().value.data();
}

void Parameter::release_values(std::string why) const {
  impl().value = AlignedBuffer();
  impl().grad = AlignedBuffer();
  impl().released = why.empty() ? "its values were released" : std::move(why);
}

Parameter& Parameter::set_name(std::string name) {
  impl().name = std::move(name);
  return *this;
}

Parameter& Parameter::set_requires_grad(bool requires_grad) {
  impl().requires_grad = requires_grad;
  return *this;
}

std::vector<double> Parameter::values() const {
  return to_doubles(raw_data(), dtype(), numel());
}

std::vector<double> Parameter::grad_values() const {
  if (!has_grad()) return std::vector<double>(static_cast<size_t>(numel()), 0.0);
  return to_doubles(raw_grad(), dtype(), numel());
}

void Parameter::assign(std::span<const double> values) {
  if (static_cast<int64_t>(values.size()) != numel()) {
    throw Error("Parameter::assign: \"" + name() + "\" " + shape().str() + " holds " +
                std::to_string(numel()) + " values, got " + std::to_string(values.size()));
  }
  from_doubles(values, raw_data(), dtype());
}

void Parameter::zero_grad() const {
  if (!has_grad()) return;
  impl().zero_grad_pending();
}

}  // namespace tapegrad
