// Tensor: validating the handle, reading values and gradients (printing is io/print.cpp's).
#include <tapegrad/graph/tensor.h>

#include <ostream>

#include <tapegrad/graph/error.h>

namespace tapegrad {

Tensor::Tensor(const Parameter& p) : Tensor(current_tape().parameter(p)) {}

void Tensor::throw_undefined() {
  throw Error("Tensor: used before it was assigned (default-constructed)");
}

void Tensor::throw_stale() const {
  throw Error("Tensor #" + std::to_string(id_) +
              ": its tape was reset (or cleared) after it was made; tensors live for one "
              "step, keep values across steps in a Parameter");
}

void Tensor::check_dtype(DType requested) const {
  if (requested != dtype()) {
    throw Error("Tensor " + tape().describe_node(id_) + " " + shape().str() + ": is " +
                dtype_name(dtype()) + ", accessed as " + dtype_name(requested));
  }
}

std::vector<double> Tensor::values() const {
  const Node& n = node();
  if (anomaly_mode_enabled()) check_forward_value(*tape_, id_, nullptr, -2);
  return to_doubles(n.value, n.dtype, n.shape.numel());
}

double Tensor::item() const {
  const Node& n = node();
  if (n.shape.numel() != 1) {
    throw Error("item: " + tape().describe_node(id_) + " " + n.shape.str() +
                " has more than one element");
  }
  // Read the one value in place: values() would build a vector, and a training loop calls
  // item() every step (tests/alloc counts it).
  if (anomaly_mode_enabled()) check_forward_value(*tape_, id_, nullptr, -2);
  return n.dtype == DType::Float32 ? static_cast<double>(*static_cast<const float*>(n.value))
                                   : *static_cast<const double*>(n.value);
}

std::vector<double> Tensor::grad_values() const {
  const Node& n = node();
  const void* grad = n.grad_to_read();
  if (grad == nullptr) return {};
  return to_doubles(grad, n.dtype, n.shape.numel());
}

Tensor& Tensor::set_name(std::string name) {
  node();  // validates the handle
  tape_->nodes_[static_cast<size_t>(id_)].name = std::move(name);
  return *this;
}

}  // namespace tapegrad
