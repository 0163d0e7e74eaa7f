// Parameter: a persistent tensor (weights) with its own value and gradient, outliving any tape.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <tapegrad/graph/aligned_buffer.h>
#include <tapegrad/graph/shape.h>

namespace tapegrad {

class Tape;

struct ParameterImpl {
  Shape shape;
  DType dtype = DType::Float32;
  std::string name;
  bool requires_grad = true;
  AlignedBuffer value;
  AlignedBuffer grad;  // empty until the first backward that reaches the parameter (as torch's)
  // Why the value was freed (Parameter::release_values), "" while it is held.
  std::string released;
  // The node that stands for this parameter on a tape, so every use in one step shares one
  // leaf (one gradient sink, one box in the DOT drawing). Valid while the tape's generation
  // matches.
  const Tape* leaf_tape = nullptr;
  uint64_t leaf_generation = 0;
  int32_t leaf_node = -1;

  // The true gradient, pending work applied (allocated zeroed on first use); keep_scale leaves
  // a pending scale to a caller that applies it in its own pass (Parameter::grad_keeping_scale).
  void* grad_data(bool keep_scale = false);
  // For a backward that writes every element of the gradient: true when it is logically zero
  // (none yet: allocated without zeroing; or zero_grad pending), and it then counts as written;
  // false when the caller must accumulate (into grad_data(), which applies a pending scale).
  bool take_zero_grad();
  // gradient = fl(gradient · scale), pending (scale: a value of the dtype; clip_grad_norm_).
  void scale_grad(double scale);
  // gradient = 0, pending (zero_grad).
  void zero_grad_pending() {
    grad_zero_ = true;
    grad_scale_ = 1.0;
  }
  double grad_scale() const { return grad_scale_; }

 private:
  // Pending work on the gradient, so zero_grad() and clip_grad_norm_ cost no pass over it: the
  // true gradient is zero when grad_zero_ (the buffer's contents are stale), else
  // fl(buffer[i] · grad_scale_) in the dtype (grad_scale_ holds a value of the dtype; 1: none).
  // Only the methods above read or write it: ops never see it (Tape::input_grad asks
  // take_zero_grad), readers get the true gradient from grad_data().
  bool grad_zero_ = false;
  double grad_scale_ = 1.0;
};

// A handle with shared ownership, like torch's nn.Parameter: copies refer to the same weights.
// Its gradient accumulates across backward passes until zero_grad(). Like torch's .grad, it is
// allocated by the first backward that reaches the parameter (a model that only infers holds
// none): until then has_grad() is false, optimisers and clipping skip the parameter, and
// grad_values() reads zeros. grad()/raw_grad() allocate a zeroed gradient when there is none.
//
// zero_grad() and clip_grad_norm_ only record what they would do (ParameterImpl's private
// grad_zero_, grad_scale_), like torch's "accumulate into None steals the gradient": the first
// backward then writes the gradient instead of adding to zeros (InputGrad::overwrite), and the
// optimisers fold the scale into their one pass (grad_keeping_scale()). Every other reader sees the
// true values: grad(), raw_grad() and grad_values() apply the pending work first (a memset, or the
// multiply torch's clipping does), so calling raw_grad() is also the explicit way to materialise
// it.
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
  void* raw_data() const;  // throws Error once the values are released
  void* raw_grad() const { return impl().grad_data(); }
  bool has_grad() const { return impl().grad.data() != nullptr; }
  // The stored gradient and its pending scale, for a pass that applies the scale itself (the
  // optimisers, clip_grad_norm_'s norm): the true gradient is fl(stored[i] · grad_scale()) in the
  // dtype. A pending zero_grad is materialised first (a parameter no backward reached since).
  const void* grad_keeping_scale() const { return impl().grad_data(/*keep_scale=*/true); }
  double grad_scale() const { return impl().grad_scale(); }

  std::vector<double> values() const;
  std::vector<double> grad_values() const;
  // Overwrites the value; throws Error when the size differs (the parameter is left unchanged).
  void assign(std::span<const double> values);
  // Zeroes the gradient, keeping its memory (torch's zero_grad(set_to_none=False)); none stays
  // none. Pending: no pass over the memory (see above).
  void zero_grad() const;  // const: a handle, like shared_ptr; the weights are shared

  // Frees the value and any gradient, keeping shape, dtype and name: for a module that keeps
  // the weights in another form (nn::use_bf16_weights keeps bfloat16 ones). From then on every
  // use of the values (data(), raw_data(), values(), assign(), a leaf on a tape, so any op,
  // optimiser, save or load) throws Error naming the parameter and `why`.
  void release_values(std::string why) const;
  bool has_values() const { return impl().released.empty(); }

  ParameterImpl* get() const { return impl_.get(); }
  const std::shared_ptr<ParameterImpl>& shared() const { return impl_; }
  bool operator==(const Parameter& other) const { return impl_ == other.impl_; }

 private:
  ParameterImpl& impl() const;
  void check_dtype(DType requested) const;
  std::shared_ptr<ParameterImpl> impl_;
};

}  // namespace tapegrad
