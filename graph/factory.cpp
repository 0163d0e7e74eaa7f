// Leaf tensors: constants from data, filled tensors, inputs that require grad, and detach.
#include <tapegrad/graph/factory.h>

#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/random.h>

namespace tapegrad {

namespace {
Tensor leaf_from_doubles(const Shape& shape, std::span<const double> values, DType dtype,
                         bool requires_grad) {
  if (static_cast<int64_t>(values.size()) != shape.numel()) {
    throw Error("tensor: shape " + shape.str() + " holds " + std::to_string(shape.numel()) +
                " values, got " + std::to_string(values.size()));
  }
  Tape& tape = current_tape();
  Tensor t = tape.leaf(shape, dtype, nullptr, requires_grad);
  from_doubles(values, tape.node(t.id()).value, dtype);
  return t;
}
}  // namespace

Tensor tensor(std::initializer_list<double> values, DType dtype) {
  return leaf_from_doubles(Shape{static_cast<int64_t>(values.size())}, values, dtype, false);
}

Tensor tensor(std::initializer_list<std::initializer_list<double>> rows, DType dtype) {
  const int64_t cols = rows.size() == 0 ? 0 : static_cast<int64_t>(rows.begin()->size());
  std::vector<double> flat;
  for (const auto& row : rows) {
    if (static_cast<int64_t>(row.size()) != cols) {
      throw Error("tensor: rows of different lengths (" + std::to_string(cols) + " and " +
                  std::to_string(row.size()) + ")");
    }
    flat.insert(flat.end(), row.begin(), row.end());
  }
  return leaf_from_doubles(Shape{static_cast<int64_t>(rows.size()), cols}, flat, dtype, false);
}

Tensor tensor(std::initializer_list<std::initializer_list<std::initializer_list<double>>> blocks,
              DType dtype) {
  const int64_t rows = blocks.size() == 0 ? 0 : static_cast<int64_t>(blocks.begin()->size());
  const int64_t cols = rows == 0 ? 0 : static_cast<int64_t>(blocks.begin()->begin()->size());
  std::vector<double> flat;
  for (const auto& block : blocks) {
    if (static_cast<int64_t>(block.size()) != rows) throw Error("tensor: ragged nested lists");
    for (const auto& row : block) {
      if (static_cast<int64_t>(row.size()) != cols) throw Error("tensor: ragged nested lists");
      flat.insert(flat.end(), row.begin(), row.end());
    }
  }
  return leaf_from_doubles(Shape{static_cast<int64_t>(blocks.size()), rows, cols}, flat, dtype,
                           false);
}

Tensor scalar(double value, DType dtype) {
  return leaf_from_doubles(Shape{}, std::span<const double>(&value, 1), dtype, false);
}

Tensor from_values(const Shape& shape, std::span<const double> values, DType dtype,
                   bool requires_grad) {
  return leaf_from_doubles(shape, values, dtype, requires_grad);
}

Tensor from_data(const Shape& shape, std::span<const float> values, bool requires_grad) {
  if (static_cast<int64_t>(values.size()) != shape.numel()) {
    throw Error("from_data: shape " + shape.str() + " holds " + std::to_string(shape.numel()) +
                " values, got " + std::to_string(values.size()));
  }
  return current_tape().leaf(shape, DType::Float32, values.data(), requires_grad);
}

Tensor from_data(const Shape& shape, std::span<const double> values, bool requires_grad) {
  if (static_cast<int64_t>(values.size()) != shape.numel()) {
    throw Error("from_data: shape " + shape.str() + " holds " + std::to_string(shape.numel()) +
                " values, got " + std::to_string(values.size()));
  }
  return current_tape().leaf(shape, DType::Float64, values.data(), requires_grad);
}

Tensor zeros(const Shape& shape, DType dtype) {
  return current_tape().leaf(shape, dtype, nullptr, false);
}

Tensor ones(const Shape& shape, DType dtype) {
  return full(shape, 1.0, dtype);
}

Tensor full(const Shape& shape, double value, DType dtype) {
  Tape& tape = current_tape();
  // `shape` may be another node's (zeros(x.shape())), which appending the leaf can move: read
  // the size from the new leaf.
  Tensor t = tape.leaf(shape, dtype, nullptr, false);
  void* out = tape.node(t.id()).value;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == DType::Float32) {
      static_cast<float*>(out)[i] = static_cast<float>(value);
    } else {
      static_cast<double*>(out)[i] = value;
    }
  }
  return t;
}

Tensor rand(const Shape& shape, DType dtype) {
  return rand(shape, dtype, default_generator());
}

Tensor rand(const Shape& shape, DType dtype, Generator& generator) {
  Tape& tape = current_tape();
  Tensor t = tape.leaf(shape, dtype, nullptr, false);
  void* out = tape.node(t.id()).value;
  if (dtype == DType::Float32) {  // t's size: `shape` may have moved (full above)
    generator.uniform(static_cast<float*>(out), t.numel());
  } else {
    generator.uniform(static_cast<double*>(out), t.numel());
  }
  return t;
}

Tensor requires_grad(const Tensor& x) {
  const Node& n = x.node();
  return x.tape().leaf(n.shape, n.dtype, n.value, true);
}

Tensor detach(const Tensor& x) {
  return x.tape().alias_leaf(x);
}

}  // namespace tapegrad
