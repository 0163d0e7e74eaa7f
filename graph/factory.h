// Leaf tensors: constants from data, filled tensors, inputs that require grad, and detach.
// Each is created on the current tape (see current_tape()).
#pragma once

#include <initializer_list>
#include <span>

#include <tapegrad/graph/tape.h>

namespace tapegrad {

class Generator;

// torch.tensor([...]) for ranks 1 to 3; float32 unless told.
Tensor tensor(std::initializer_list<double> values, DType dtype = DType::Float32);
Tensor tensor(std::initializer_list<std::initializer_list<double>> rows,
              DType dtype = DType::Float32);
Tensor tensor(std::initializer_list<std::initializer_list<std::initializer_list<double>>> blocks,
              DType dtype = DType::Float32);
Tensor scalar(double value, DType dtype = DType::Float32);

// A tensor of `shape` holding `values` (row-major, converted to dtype).
Tensor from_values(const Shape& shape, std::span<const double> values, DType dtype = DType::Float32,
                   bool requires_grad = false);
Tensor from_data(const Shape& shape, std::span<const float> values, bool requires_grad = false);
Tensor from_data(const Shape& shape, std::span<const double> values, bool requires_grad = false);

Tensor zeros(const Shape& shape, DType dtype = DType::Float32);
Tensor ones(const Shape& shape, DType dtype = DType::Float32);
Tensor full(const Shape& shape, double value, DType dtype = DType::Float32);

// torch.rand(shape): uniform [0, 1) from the generator (the default one unless given).
Tensor rand(const Shape& shape, DType dtype = DType::Float32);
Tensor rand(const Shape& shape, DType dtype, Generator& generator);

// A leaf that requires grad, holding a copy of x's value (torch's x.detach().requires_grad_()).
Tensor requires_grad(const Tensor& x);
// A constant sharing x's storage: no copy, no gradient flows back through it.
Tensor detach(const Tensor& x);

}  // namespace tapegrad
