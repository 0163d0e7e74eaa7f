// The tape: recording nodes and the reverse walk of backward.
#include <tapegrad/graph/tape.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include <tapegrad/graph/error.h>

namespace tapegrad {

namespace {

// Every (tape, reset) pair gets a number no other has, so a Tensor from before a reset, or
// from another tape that reused the address, is recognised as stale.
std::atomic<uint64_t> next_generation{1};

}  // namespace

const char* Node::op_name() const {
  static constexpr const char* kLeafNames[] = {"constant", "input", "parameter", "op"};
  return op != nullptr ? op->name : kLeafNames[static_cast<int>(kind)];  // NodeKind's order
}

const void* Node::grad_to_read() const {
  if (kind == NodeKind::Parameter && param->grad.data() != nullptr) return param->grad_data();
  return grad;
}

Tape::Tape() : generation_(next_generation.fetch_add(1)) {}
Tape::~Tape() = default;

Node& Tape::append(NodeKind kind, Shape shape, DType dtype) {
  if (nodes_.size() >= static_cast<size_t>(INT32_MAX)) throw Error("Tape: more than 2^31 nodes");
  Node& n = nodes_.emplace_back();
  n.kind = kind;
  n.shape = shape;
  n.dtype = dtype;
  n.scope = scopes_.current();
  return n;
}

Tensor Tape::record(const OpDef& op, Shape shape, DType dtype, Inputs inputs) {
  bool needs_grad = false;
  const bool anomaly = anomaly_mode_enabled();
  auto* ids = arena_.allocate_array<int32_t>(static_cast<int64_t>(inputs.size()));
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& in = inputs[k];
    if (&in.tape() != this) {
      throw Error(std::string(op.name) + ": input " + std::to_string(k) +
                  " belongs to another tape (or was made on another current tape)");
    }
    const Node& in_node = in.node();  // throws for stale handles
    if (anomaly) check_forward_value(*this, in.id(), op.name, static_cast<int>(k));
    needs_grad = needs_grad || in_node.requires_grad;
    ids[k] = in.id();
  }
  needs_grad = needs_grad && grad_enabled();
  Node& n = append(NodeKind::Op, shape, dtype);
  n.op = &op;
  n.requires_grad = needs_grad;
  n.inputs = ids;
  n.num_inputs = static_cast<int32_t>(inputs.size());
  n.value = arena_.allocate(n.bytes());
  return Tensor(this, size() - 1, generation_);
}

Tensor Tape::leaf(Shape shape, DType dtype, const void* data, bool requires_grad) {
  Node& n = append(requires_grad ? NodeKind::Input : NodeKind::Constant, shape, dtype);
  n.requires_grad = requires_grad;
  const size_t bytes = static_cast<size_t>(shape.numel() * dtype_size(dtype));
  n.value = data != nullptr ? arena_.allocate(bytes) : arena_.allocate_zeroed(bytes);
  if (data != nullptr) std::memcpy(n.value, data, bytes);
  return Tensor(this, size() - 1, generation_);
}

Tensor Tape::alias_leaf(const Tensor& source) {
  const Node& src = source.node();
  void* value = src.value;
  const Shape shape = src.shape;
  const DType dtype = src.dtype;
  Node& n = append(NodeKind::Constant, shape, dtype);
  n.value = value;
  return Tensor(this, size() - 1, generation_);
}

Tensor Tape::parameter(const Parameter& p) {
  ParameterImpl* impl = p.get();
  if (impl == nullptr) throw Error("Tensor: a default-constructed Parameter has no value");
  void* value = p.raw_data();  // throws, naming the parameter, once its values are released
  if (impl->leaf_tape == this && impl->leaf_generation == generation_) {
    return Tensor(this, impl->leaf_node, generation_);
  }
  Node& n = append(NodeKind::Parameter, impl->shape, impl->dtype);
  n.requires_grad = impl->requires_grad;
  n.value = value;
  n.grad = impl->grad.data();  // null until a backward reaches the parameter
  n.param = p.shared();        // its name is read through it (Node::display_name)
  impl->leaf_tape = this;
  impl->leaf_generation = generation_;
  impl->leaf_node = size() - 1;
  return Tensor(this, impl->leaf_node, generation_);
}

InputGrad<void> Tape::input_grad_buffer(const Node& consumer, int k) {
  Node& in = nodes_[static_cast<size_t>(consumer.inputs[k])];
  if (!in.requires_grad) return {};
  const int64_t numel = in.shape.numel();
  const int32_t* ids = consumer.inputs;  // an input taken twice (add(x, x)): both terms land
  const bool twice = std::count(ids, ids + consumer.num_inputs, ids[k]) > 1;
  if (in.kind == NodeKind::Parameter) {
    // A pending zero_grad makes the gradient "nothing written yet"; a pending clip scale is
    // applied by grad_data() before anything is added. Both stay the parameter's business.
    const bool zero = !twice && in.param->take_zero_grad();
    return {in.grad = in.param->grad_data(), zero, numel};
  }
  const bool zero = in.grad == nullptr;
  if (zero) in.grad = twice ? arena_.allocate_zeroed(in.bytes()) : arena_.allocate(in.bytes());
  return {in.grad, zero && !twice, numel};
}

void Tape::backward(const Tensor& root, const BackwardOptions& options) {
  const Node& r = root.node();
  if (r.shape.numel() != 1) {
    throw Error("backward: " + describe_node(root.id()) + " " + r.shape.str() +
                " is not a scalar; pass a gradient of the same shape to backward(root, grad)");
  }
  const double one = 1.0;
  backward(root, std::span<const double>(&one, 1), options);
}

void Tape::backward(const Tensor& root, std::span<const double> root_grad,
                    const BackwardOptions& options) {
  if (&root.tape() != this) throw Error("backward: the tensor belongs to another tape");
  const Node& r = root.node();
  if (released_) {
    throw Error(
        "backward: this tape was already walked by a backward pass that released its graph; "
        "pass BackwardOptions{.retain_graph = true} to the earlier backward, or record a new "
        "step after tape.reset()");
  }
  if (!r.requires_grad) {
    throw Error("backward: " + describe_node(root.id()) +
                " does not require grad (no parameter or input that requires grad reaches it)");
  }
  if (static_cast<int64_t>(root_grad.size()) != r.shape.numel()) {
    throw Error("backward: the gradient for " + describe_node(root.id()) + " " + r.shape.str() +
                " has " + std::to_string(root_grad.size()) + " values, expected " +
                std::to_string(r.shape.numel()));
  }
  // Gradients of op outputs start fresh each pass; leaves keep accumulating, as in torch.
  for (int32_t i = 0; i <= root.id(); ++i) {
    Node& n = nodes_[static_cast<size_t>(i)];
    if (n.kind == NodeKind::Op) n.grad = nullptr;
  }
  const bool anomaly = anomaly_mode_enabled();
  if (anomaly) {
    check_forward_value(*this, root.id(), nullptr, -1);
    check_seed_gradient(*this, root.id(), root_grad);
  }
  Node& seed = nodes_[static_cast<size_t>(root.id())];
  // An op's seed is written, so a -0 stays -0 (a checkpoint's segment seeded with the gradient
  // the longer walk hands on); a leaf's is added to what it accumulated.
  const bool add = seed.kind != NodeKind::Op;
  if (seed.kind == NodeKind::Parameter) seed.grad = seed.param->grad_data();  // pending applied
  if (seed.grad == nullptr) seed.grad = arena_.allocate_zeroed(seed.bytes());
  from_doubles(root_grad, seed.grad, seed.dtype, add);
  for (int32_t i = root.id(); i >= 0; --i) {
    Node& n = nodes_[static_cast<size_t>(i)];
    if (n.kind == NodeKind::Op && n.requires_grad && n.grad != nullptr) {
      n.op->backward(*this, n);
      for (int k = 0; anomaly && k < n.num_inputs; ++k) check_gradient(*this, i, k);
      if (!options.retain_graph) {  // dead now: the gradients of earlier nodes reuse its memory
        arena_.release(n.grad, n.bytes());
        n.grad = nullptr;
      }
    }
    if (options.after_node) options.after_node(i);
  }
  if (!options.retain_graph) released_ = true;
}

void Tape::reset() {
  for (Node& n : nodes_) n.param.reset();
  nodes_.clear();
  owned_.clear();
  arena_.reset();
  generation_ = next_generation.fetch_add(1);
  released_ = false;
  scopes_.leave_all();
}

}  // namespace tapegrad
