// The tape: nodes recorded in creation order, tensor handles into it, and reverse-mode backward.
//
// Ownership, in one paragraph: a Tape owns every node it records and draws their values,
// gradients and saved buffers from its Arena. A Tensor is a cheap handle {tape, node id,
// generation}; it is valid while its tape lives and until the tape is reset, after which using
// it throws. Parameters own their storage and outlive tapes: their leaf node points at that
// storage (no copy) and backward accumulates straight into the parameter's gradient.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tapegrad/graph/anomaly.h>
#include <tapegrad/graph/arena.h>
#include <tapegrad/graph/op.h>
#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/scope.h>
#include <tapegrad/graph/shape.h>

namespace tapegrad {

class Tensor;  // graph/tensor.h, included at the end

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
  void* grad = nullptr;  // null until backward first accumulates into it (and, for op outputs,
                         // again once their backward has run, unless the graph is retained)
  std::shared_ptr<ParameterImpl> param;  // set for NodeKind::Parameter
  const int32_t* inputs = nullptr;       // ids of the input nodes, in the op's argument order
  int32_t num_inputs = 0;
  // The op's own saved state (its arguments and whatever its backward needs): the struct it passed
  // to Tape::record, copied into the arena.
  const void* state = nullptr;
  int32_t scope = -1;  // module scope (Tape::scopes()) for drawing and error messages
  std::string name;    // optional, given by the user (Tensor::set_name)
  // Anomaly mode's memo of this node's value: 0 not checked yet, 1 finite, 2 holds ±inf that
  // were allowed (propagated from an input, or OpDef::writes_inf). Parameters are never memoised.
  uint8_t anomaly_checked = 0;

  const char* op_name() const;
  // The name shown (Tensor::name, the drawing, error messages): the one given by the user, else a
  // parameter leaf's parameter name, read from the parameter rather than copied at each use (a
  // full name such as "trf_blocks.0.att.W_query.weight" would cost an allocation every step).
  const std::string& display_name() const { return name.empty() && param ? param->name : name; }
  size_t bytes() const { return static_cast<size_t>(shape.numel() * dtype_size(dtype)); }
  // The gradient as a reader sees it (Tensor::grad, the drawing, anomaly mode): a parameter's is
  // read through the parameter, so a pending zero_grad or clip is applied first. Null if none.
  const void* grad_to_read() const;
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

// Where a backward writes the gradient of one of its inputs: Tape::input_grad(node, k), the one
// call an op makes for each input. Two ways to write it:
//   T* dx = tape.input_grad<T>(node, 0).to_add();  // terms added one by one: dx[i] += term
//   InputGrad<T> dx = tape.input_grad<T>(node, 0);  // one term per element (a GEMM with beta 0):
//   if (dx.overwrite) write d = term, else add d += term
// Either way the gradient ends as 0 + the terms (only a zero's sign can differ: 0 + (-0) is +0).
template <class T>
struct InputGrad {
  T* data = nullptr;       // null: that input needs no gradient
  bool overwrite = false;  // no term written yet: the buffer holds garbage, write every element
  int64_t numel = 0;       // the input's element count

  // The buffer, zero-filled first when nothing was written yet: for backwards that add (+=).
  T* to_add() {
    if (overwrite) std::fill_n(data, numel, T(0));
    overwrite = false;
    return data;
  }
};

// An op's inputs, in its argument order: a braced list ({a, b}) or a span.
struct Inputs : std::span<const Tensor> {
  Inputs(std::initializer_list<Tensor> list);  // graph/tensor.h, where Tensor is complete
  Inputs(std::span<const Tensor> inputs) : std::span<const Tensor>(inputs) {}  // NOLINT
};

struct BackwardOptions {
  // false: the graph counts as released after backward, and another backward over it throws
  // (as in torch); the gradient of each op output is released as soon as its op's backward has
  // run (the walk reuses that memory for earlier nodes' gradients), so afterwards an op output's
  // grad() is null, like torch's non-leaf .grad. Values and saved state live until reset().
  // true: every gradient stays readable (for inspection and the DOT drawing) until reset().
  bool retain_graph = false;
  // Called in the reverse walk after node i's turn (whether or not it had a backward to run), for
  // i from the root down to 0: from then on, no node numbered i or later writes a gradient again
  // (dist::DataParallel starts reducing the gradients that are final there).
  std::function<void(int32_t)> after_node{};
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
  Tensor record(const OpDef& op, Shape shape, DType dtype, Inputs inputs);
  // The same, keeping `state` (the op's arguments and whatever its backward needs: a plain
  // struct, copied into the arena, with pointers to buffers the op drew from arena()) on the
  // node, for the backward, the drawing and error messages: node.state_as<State>().
  template <class State>
  Tensor record(const OpDef& op, Shape shape, DType dtype, Inputs inputs, const State& state);
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
  Tensor tensor(int32_t id);  // a handle to node `id` of this generation
  const Node& input(const Node& node, int k) const {
    return nodes_[static_cast<size_t>(node.inputs[k])];
  }
  Arena& arena() { return arena_; }
  uint64_t generation() const { return generation_; }
  bool released() const { return released_; }
  void mark_released() { released_ = true; }  // a backward that did not retain the graph ran

  // --- backward ---------------------------------------------------------------------------
  // Seeds d(root)=1 (root must hold one element) and walks the tape once in reverse.
  void backward(const Tensor& root, const BackwardOptions& options = {});
  // Seeds d(root) with `root_grad` (row-major, root's numel values).
  void backward(const Tensor& root, std::span<const double> root_grad,
                const BackwardOptions& options = {});

  // Where the backward of `consumer` writes the gradient of its input `k` (InputGrad above): the
  // input's shape and dtype; null data when that input needs no gradient. It counts as written
  // once asked for. An input the consumer takes twice (add(x, x)) is always added to.
  template <class T>
  InputGrad<T> input_grad(const Node& consumer, int k) {
    const InputGrad<void> g = input_grad_buffer(consumer, k);
    return {static_cast<T*>(g.data), g.overwrite, g.numel};
  }

  // Starts a fresh step: forgets all nodes (stale Tensors then throw) and keeps the memory.
  void reset();

  // Keeps `object` alive until reset(): what an op's backward needs that the arena, which runs no
  // destructors, cannot hold (a checkpoint's function, graph/checkpoint.h).
  void own_until_reset(std::shared_ptr<const void> object) { owned_.push_back(std::move(object)); }

  // Module scopes (NameScope enters one): clusters in the drawing, context in errors.
  ScopeTable& scopes() { return scopes_; }
  const ScopeTable& scopes() const { return scopes_; }

  // "matmul #12 \"scores\" in MultiHeadAttention/head 0": where a node was made.
  std::string describe_node(int32_t id) const;

 private:
  friend class Tensor;
  InputGrad<void> input_grad_buffer(const Node& consumer, int k);
  Node& append(NodeKind kind, Shape shape, DType dtype);

  std::vector<Node> nodes_;
  Arena arena_;
  uint64_t generation_;
  bool released_ = false;
  ScopeTable scopes_;
  std::vector<std::shared_ptr<const void>> owned_;  // own_until_reset
};

}  // namespace tapegrad

#include <tapegrad/graph/tensor.h>  // Tensor, and Tape::record's typed-state form that returns one
