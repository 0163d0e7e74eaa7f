// Tensor: a cheap handle {tape, node id, generation} to one node of a tape.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <new>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapegrad/graph/tape.h>

namespace tapegrad {

// A handle to one node of a tape: cheap to copy, never owns data.
class Tensor {
 public:
  Tensor() = default;
  // The parameter's leaf on the current tape; implicit so parameters read like tensors in ops.
  Tensor(const Parameter& p);  // NOLINT(google-explicit-constructor)

  bool defined() const { return tape_ != nullptr; }
  Tape& tape() const;
  int32_t id() const { return id_; }
  const Node& node() const;

  const Shape& shape() const { return node().shape; }
  DType dtype() const { return node().dtype; }
  int rank() const { return shape().rank(); }
  int64_t numel() const { return shape().numel(); }
  int64_t size(int dim) const { return shape().size(dim); }
  bool requires_grad() const { return node().requires_grad; }

  template <class T>
  const T* data() const {
    check_dtype(dtype_of<T>());
    return node().value_as<const T>();
  }
  std::vector<double> values() const;
  double item() const;  // the single value; throws unless numel() == 1

  // The gradient accumulated by backward: null / empty when none reached this tensor, and for an
  // op's output once a backward without retain_graph has passed it (BackwardOptions).
  template <class T>
  const T* grad() const {
    check_dtype(dtype_of<T>());
    return static_cast<const T*>(node().grad_to_read());
  }
  std::vector<double> grad_values() const;

  const std::string& name() const { return node().display_name(); }
  Tensor& set_name(std::string name);

  // PyTorch's print format: `tensor([[0.4421, 0.5931], ...])` (io/print.h; defined there).
  std::string str() const;

  void backward(const BackwardOptions& options = {}) const { tape().backward(*this, options); }

 private:
  friend class Tape;
  Tensor(Tape* tape, int32_t id, uint64_t generation)
      : tape_(tape), id_(id), generation_(generation) {}
  void check_dtype(DType requested) const;
  [[noreturn]] static void throw_undefined();
  [[noreturn]] void throw_stale() const;

  Tape* tape_ = nullptr;
  int32_t id_ = -1;
  uint64_t generation_ = 0;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);  // t.str(), in io/print.cpp

// Inline: every op reads its inputs' nodes, and on the book's tiny tensors the calls cost as much
// as the arithmetic. The throwing paths stay out of line.
inline Tape& Tensor::tape() const {
  if (tape_ == nullptr) [[unlikely]]
    throw_undefined();
  return *tape_;
}

inline const Node& Tensor::node() const {
  const Tape& t = tape();
  if (t.generation_ != generation_) [[unlikely]]
    throw_stale();
  return t.nodes_[static_cast<size_t>(id_)];
}

inline Inputs::Inputs(std::initializer_list<Tensor> list)
    : std::span<const Tensor>(list.begin(), list.size()) {}

inline Tensor Tape::tensor(int32_t id) {
  return Tensor(this, id, generation_);
}

// Tape::record with a typed state: here, after Tensor, because it returns one.
template <class State>
Tensor Tape::record(const OpDef& op, Shape shape, DType dtype, Inputs inputs, const State& state) {
  static_assert(std::is_trivially_copyable_v<State> && std::is_trivially_destructible_v<State>,
                "op state lives in the arena, which runs no destructors");
  static_assert(alignof(State) <= Arena::kAlignment);
  Tensor y = record(op, std::move(shape), dtype, inputs);
  nodes_.back().state = new (arena_.allocate(sizeof(State))) State(state);
  return y;
}

}  // namespace tapegrad
