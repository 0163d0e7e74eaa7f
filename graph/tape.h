// The tape: nodes recorded in creation order, tensor handles into it, and reverse-mode backward.
//
// Ownership, in one paragraph: a Tape owns every node it records and draws their values,
// gradients and saved buffers from its Arena. A Tensor is a cheap handle {tape, node id,
// generation}; it is valid while its tape lives and until the tape is reset, after which using
// it throws. Parameters own their storage and outlive tapes: their leaf node points at that
// storage (no copy) and backward accumulates straight into the parameter's gradient.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "graph/arena.h"
#include "graph/op.h"
#include "graph/parameter.h"
#include "graph/shape.h"

namespace tapegrad {

class Tape;
class Tensor;
struct Node;

enum class NodeKind : uint8_t {
  Constant,   // data that never needs a gradient
  Input,      // a leaf created with requires_grad: its gradient lives on the tape
  Parameter,  // a leaf bound to a Parameter: its gradient is the Parameter's
  Op,         // the output of an op
};

struct Node {
  NodeKind kind = NodeKind::Constant;
  const OpDef* op = nullptr;  // null for leaves
  Shape shape;
  DType dtype = DType::Float32;
  bool requires_grad = false;
  void* value = nullptr;
  void* grad = nullptr;                  // null until backward first accumulates into it
  std::shared_ptr<ParameterImpl> param;  // set for NodeKind::Parameter
  const int32_t* inputs = nullptr;       // ids of the input nodes, in the op's argument order
  int32_t num_inputs = 0;
  // The op's arguments (scale, p, dims, ...) and anything else its backward needs.
  std::array<double, 4> attr{};
  std::array<int64_t, 4> iattr{};
  void* saved = nullptr;  // an extra buffer in the arena (dropout mask, argmax, statistics)
  // The op's own saved state: the struct it passed to Tape::record, copied into the arena.
  const void* state = nullptr;
  int32_t scope = -1;  // module scope (Tape::scope_path) for drawing and error messages
  std::string name;    // optional, given by the user
  // Set by ops that write ±inf on purpose (masked_fill with an infinite value): anomaly mode
  // then does not report the infinities of this output (NaN still is).
  bool produces_inf = false;
  // Anomaly mode's memo of this node's value: 0 not checked yet, 1 finite, 2 holds ±inf that
  // were allowed (propagated from an input, or produces_inf). Parameters are never memoised.
  uint8_t anomaly_checked = 0;

  const char* op_name() const;
  template <class T>
  T* value_as() const {
    return static_cast<T*>(value);
  }
  template <class T>
  T* grad_as() const {
    return static_cast<T*>(grad);
  }
  // The state its op recorded, read back with the op's own type.
  template <class State>
  const State& state_as() const {
    return *static_cast<const State*>(state);
  }
};

struct BackwardOptions {
  bool retain_graph = false;  // allow another backward over the same tape
};

class Tape {
 public:
  Tape();
  ~Tape();
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;

  // --- recording (used by ops) ---------------------------------------------------------
  // (Shapes are taken by value: callers often pass another node's shape, and appending may
  // move the nodes.)
  // Appends an op node with an uninitialised output of `shape`; the op then writes the value.
  // The node requires grad when grad mode is on and any input does; then `op.backward` runs.
  Tensor record(const OpDef& op, Shape shape, DType dtype, std::initializer_list<Tensor> inputs);
  Tensor record(const OpDef& op, Shape shape, DType dtype, std::span<const Tensor> inputs);
  // The same, keeping `state` (the op's arguments and whatever its backward needs: a plain
  // struct, copied into the arena, with pointers to buffers the op drew from arena()) on the
  // node, for the backward, the drawing and error messages: node.state_as<State>().
  template <class State>
  Tensor record(const OpDef& op, Shape shape, DType dtype, std::initializer_list<Tensor> inputs,
                const State& state);
  template <class State>
  Tensor record(const OpDef& op, Shape shape, DType dtype, std::span<const Tensor> inputs,
                const State& state);
  // A leaf holding a copy of `data` (or zeros when null), of dtype `dtype`.
  Tensor leaf(Shape shape, DType dtype, const void* data, bool requires_grad);
  // A leaf whose value is another node's storage (detach): no copy.
  Tensor alias_leaf(const Tensor& source);
  // The leaf standing for `p` on this tape (created on first use in this generation).
  Tensor parameter(const Parameter& p);

  // --- inspection -------------------------------------------------------------------------
  int32_t size() const { return static_cast<int32_t>(nodes_.size()); }
  const Node& node(int32_t id) const { return nodes_[static_cast<size_t>(id)]; }
  Node& node(int32_t id) { return nodes_[static_cast<size_t>(id)]; }
  const Node& input(const Node& node, int k) const {
    return nodes_[static_cast<size_t>(node.inputs[k])];
  }
  Arena& arena() { return arena_; }
  uint64_t generation() const { return generation_; }
  bool released() const { return released_; }

  // --- backward ---------------------------------------------------------------------------
  // Seeds d(root)=1 (root must hold one element) and walks the tape once in reverse.
  void backward(const Tensor& root, const BackwardOptions& options = {});
  // Seeds d(root) with `root_grad` (row-major, root's numel values).
  void backward(const Tensor& root, std::span<const double> root_grad,
                const BackwardOptions& options = {});

  // The gradient buffer of input `k` of `consumer`, zeroed on first use, for the consumer's
  // backward to accumulate into; null when that input needs no gradient. `grad_shape` is the
  // shape the backward computed for it, checked against the input's shape.
  template <class T>
  T* grad_for(const Node& consumer, int k, const Shape& grad_shape) {
    return static_cast<T*>(grad_buffer(consumer, k, grad_shape));
  }
  void* grad_buffer(const Node& consumer, int k, const Shape& grad_shape);

  // Starts a fresh step: forgets all nodes (stale Tensors then throw) and keeps the memory.
  void reset();

  // --- module scopes (clusters in the drawing; context in errors) --------------------------
  void push_scope(std::string_view name);
  void pop_scope();
  int32_t current_scope() const { return current_scope_; }
  // "MultiHeadAttention/head 0"; empty for -1.
  std::string scope_path(int32_t scope) const;
  const std::string& scope_name(int32_t scope) const {
    return scopes_[static_cast<size_t>(scope)].name;
  }
  int32_t scope_parent(int32_t scope) const { return scopes_[static_cast<size_t>(scope)].parent; }
  int32_t num_scopes() const { return static_cast<int32_t>(scopes_.size()); }

  // "matmul #12 \"scores\" in MultiHeadAttention/head 0": where a node was made.
  std::string describe_node(int32_t id) const;

 private:
  friend class Tensor;
  Node& append(NodeKind kind, Shape shape, DType dtype);
  // Anomaly mode (see AnomalyMode). `consumer` names the op using the value (input `k`), or is
  // null with k = -1 when backward starts from it, -2 when it is read.
  void check_forward_value(int32_t id, const char* consumer, int k);
  void check_gradient(int32_t consumer, int k) const;

  struct Scope {
    std::string name;
    int32_t parent;
  };
  std::vector<Node> nodes_;
  Arena arena_;
  uint64_t generation_;
  bool released_ = false;
  std::vector<Scope> scopes_;  // interned across resets, so steady-state steps allocate nothing
  int32_t current_scope_ = -1;
};

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

  // The gradient accumulated by backward: null / empty when none reached this tensor.
  template <class T>
  const T* grad() const {
    check_dtype(dtype_of<T>());
    return node().grad_as<const T>();
  }
  std::vector<double> grad_values() const;

  const std::string& name() const { return node().name; }
  Tensor& set_name(std::string name);

  // PyTorch's print format: `tensor([[0.4421, 0.5931], ...])`.
  std::string str() const;

  void backward(const BackwardOptions& options = {}) const { tape().backward(*this, options); }

 private:
  friend class Tape;
  Tensor(Tape* tape, int32_t id, uint64_t generation)
      : tape_(tape), id_(id), generation_(generation) {}
  void check_dtype(DType requested) const;

  Tape* tape_ = nullptr;
  int32_t id_ = -1;
  uint64_t generation_ = 0;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

template <class State>
Tensor Tape::record(const OpDef& op, Shape shape, DType dtype, std::initializer_list<Tensor> inputs,
                    const State& state) {
  return record(op, std::move(shape), dtype, std::span<const Tensor>(inputs.begin(), inputs.size()),
                state);
}

template <class State>
Tensor Tape::record(const OpDef& op, Shape shape, DType dtype, std::span<const Tensor> inputs,
                    const State& state) {
  static_assert(std::is_trivially_copyable_v<State> && std::is_trivially_destructible_v<State>,
                "op state lives in the arena, which runs no destructors");
  static_assert(alignof(State) <= Arena::kAlignment);
  Tensor y = record(op, std::move(shape), dtype, inputs);
  nodes_.back().state = new (arena_.allocate(sizeof(State))) State(state);
  return y;
}

// --- the explicit current-tape and grad-mode state --------------------------------------------
// Leaves (constants, parameters) are created on the current tape: the innermost TapeScope's,
// else a per-thread default tape. Ops record on their inputs' tape.
Tape& current_tape();

class TapeScope {
 public:
  explicit TapeScope(Tape& tape);
  ~TapeScope();
  TapeScope(const TapeScope&) = delete;
  TapeScope& operator=(const TapeScope&) = delete;

 private:
  Tape* previous_;
};

bool grad_enabled();

// Like torch.no_grad(): ops still compute, but record no backward and need no gradient.
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// Names the nodes recorded inside it (on the current tape) as part of a module or head.
class NameScope {
 public:
  explicit NameScope(std::string_view name, Tape& tape = current_tape());
  ~NameScope();
  NameScope(const NameScope&) = delete;
  NameScope& operator=(const NameScope&) = delete;

 private:
  Tape& tape_;
};

// Anomaly mode (off by default; a scope guard, per thread), like torch.autograd.detect_anomaly:
// every forward value and every gradient is checked for NaN and Inf, and the Error names the op
// that produced it, the node's name, and where in the forward pass it was created (its node
// index on the tape and its NameScope path), e.g.
//   anomaly: forward: exp #4 "logits" in attention/head 0 produced Inf (first at element 3 of
//   [2, 3], float32) from finite inputs; found when matmul consumed it as input 0
// What is checked, and when:
//  - forward: an op writes its output after it is recorded, so each value is checked when it is
//    next used: when an op consumes it, when backward starts from it (the loss), and when it is
//    read with values(), item() or str(). Every node the loss depends on is therefore checked
//    before backward runs. NaN is always an anomaly. ±inf is one only where it first appears:
//    an op output holding inf when none of its inputs did (exp overflow, log(0), x / 0), or a
//    parameter holding inf. Infinities a caller put in a constant (an additive -inf mask), that
//    propagate from an input, or that masked_fill / causal_mask write on purpose are not.
//  - backward: the seed gradient, and after each node's backward the gradients of its inputs.
// A forward check throws before the consuming op records anything. Outside anomaly mode nothing
// is checked and nothing is slower.
bool anomaly_mode_enabled();
class AnomalyMode {
 public:
  AnomalyMode();
  ~AnomalyMode();
  AnomalyMode(const AnomalyMode&) = delete;
  AnomalyMode& operator=(const AnomalyMode&) = delete;

 private:
  bool previous_;
};

}  // namespace tapegrad
