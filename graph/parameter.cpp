// Parameter: persistent weights and their gradients in aligned storage.
#include "graph/parameter.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "graph/error.h"

namespace tapegrad {

void AlignedBuffer::FreeDeleter::operator()(void* p) const {
  std::free(p);
}

AlignedBuffer::AlignedBuffer(size_t bytes) : bytes_(bytes) {
  const size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  memory_.reset(std::aligned_alloc(64, rounded));
  if (!memory_) throw std::bad_alloc();
  std::memset(memory_.get(), 0, rounded);
}

Parameter::Parameter(const Shape& shape, DType dtype, std::string name)
    : impl_(std::make_shared<ParameterImpl>()) {
  impl_->shape = shape;
  impl_->dtype = dtype;
  impl_->name = std::move(name);
  const size_t bytes = static_cast<size_t>(shape.numel() * dtype_size(dtype));
  impl_->value = AlignedBuffer(bytes);
}

void* ParameterImpl::grad_data() {
  if (grad.data() == nullptr) grad = AlignedBuffer(value.bytes());
  return grad.data();
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
  if (requested != impl().dtype) {
    throw Error("Parameter \"" + impl().name + "\" " + impl().shape.str() + ": is " +
                dtype_name(impl().dtype) + ", accessed as " + dtype_name(requested));
  }
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
  for (int64_t i = 0; i < numel(); ++i) {
    const double v = values[static_cast<size_t>(i)];
    if (dtype() == DType::Float32) {
      static_cast<float*>(raw_data())[i] = static_cast<float>(v);
    } else {
      static_cast<double*>(raw_data())[i] = v;
    }
  }
}

void Parameter::zero_grad() const {
  if (has_grad()) std::memset(impl().grad.data(), 0, impl().grad.bytes());
}

}  // namespace tapegrad
