// Parameter: a persistent tensor (weights) with its own value and gradient, outliving any tape.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graph/shape.h"

namespace tapegrad {

class Tape;

// Owned, aligned, zero-initialised storage for one parameter's value or gradient.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes);
  void* data() const { return memory_.get(); }
  size_t bytes() const { return bytes_; }

 private:
  struct FreeDeleter {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, FreeDeleter> memory_;
  size_t bytes_ = 0;
};

struct ParameterImpl {
  Shape shape;
  DType dtype = DType::Float32;
  std::string name;
  bool requires_grad = true;
  AlignedBuffer value;
  AlignedBuffer grad;  // empty until the first backward that reaches the parameter (as torch's)
  // The node that stands for this parameter on a tape, so every use in one step shares one
  // leaf (one gradient sink, one box in the DOT drawing). Valid while the tape's generation
  // matches.
  const Tape* leaf_tape = nullptr;
  uint64_t leaf_generation = 0;
  int32_t leaf_node = -1;

  void* grad_data();  // the gradient, allocated zeroed on first use
};

// A handle with shared ownership, like torch's nn.Parameter: copies refer to the same weights.
// Its gradient accumulates across backward passes until zero_grad(). Like torch's .grad, it is
// allocated by the first backward that reaches the parameter (a model that only infers holds
// none): until then has_grad() is false, optimisers and clipping skip the parameter, and
// grad_values() reads zeros. grad()/raw_grad() allocate a zeroed gradient when there is none.
class Parameter {
 public:
  Parameter() = default;
  Parameter(const Shape& shape, DType dtype = DType::Float32, std::string name = "");
  // A parameter holding a copy of `values` (row-major, converted to `dtype`).
  static Parameter from_values(const Shape& shape, std::span<const double> values,
                               DType dtype = DType::Float32, std::string name = "");
  static Parameter from_values(const Shape& shape, std::initializer_list<double> values,
                               DType dtype = DType::Float32, std::string name = "") {
    return from_values(shape, std::span<const double>(values.begin(), values.size()), dtype,
                       std::move(name));
  }

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl().shape; }
  DType dtype() const { return impl().dtype; }
  int64_t numel() const { return impl().shape.numel(); }
  const std::string& name() const { return impl().name; }
  Parameter& set_name(std::string name);
  bool requires_grad() const { return impl().requires_grad; }
  Parameter& set_requires_grad(bool requires_grad);

  template <class T>
  T* data() const {
    check_dtype(dtype_of<T>());
    return static_cast<T*>(impl().value.data());
  }
  template <class T>
  T* grad() const {
    check_dtype(dtype_of<T>());
    return static_cast<T*>(raw_grad());
  }
  void* raw_data() const { return impl().value.data(); }
  void* raw_grad() const { return impl().grad_data(); }
  bool has_grad() const { return impl().grad.data() != nullptr; }

  std::vector<double> values() const;
  std::vector<double> grad_values() const;
  // Overwrites the value; throws Error when the size differs (the parameter is left unchanged).
  void assign(std::span<const double> values);
  // Zeroes the gradient, keeping its memory (torch's zero_grad(set_to_none=False)); none stays
  // none.
  void zero_grad() const;  // const: a handle, like shared_ptr; the weights are shared

  ParameterImpl* get() const { return impl_.get(); }
  const std::shared_ptr<ParameterImpl>& shared() const { return impl_; }
  bool operator==(const Parameter& other) const { return impl_ == other.impl_; }

 private:
  ParameterImpl& impl() const;
  void check_dtype(DType requested) const;
  std::shared_ptr<ParameterImpl> impl_;
};

}  // namespace tapegrad
