// The tape: recording nodes, the reverse walk of backward, tensor handles and the scope guards.
#include "graph/tape.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <ostream>

#include "graph/error.h"
#include "graph/print.h"

namespace tapegrad {

namespace {

// Every (tape, reset) pair gets a number no other has, so a Tensor from before a reset, or
// from another tape that reused the address, is recognised as stale.
std::atomic<uint64_t> next_generation{1};

thread_local Tape* current_tape_ptr = nullptr;
thread_local bool grad_mode = true;
thread_local bool anomaly_mode = false;

template <class T>
void add_seed(T* grad, std::span<const double> seed) {
  for (size_t i = 0; i < seed.size(); ++i) grad[i] += static_cast<T>(seed[i]);
}

// What anomaly mode found in a buffer: the first NaN and the first ±inf (-1 when none).
struct NonFinite {
  int64_t first_nan = -1;
  int64_t first_inf = -1;
};

template <class T>
NonFinite scan_typed(const T* p, int64_t n) {
  NonFinite f;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isfinite(p[i])) continue;
    if (std::isnan(p[i])) {
      f.first_nan = i;
      return f;  // NaN is reported first; the scan can stop
    }
    if (f.first_inf < 0) f.first_inf = i;
  }
  return f;
}

NonFinite scan(const void* p, DType dtype, int64_t n) {
  if (p == nullptr) return {};
  return dtype == DType::Float32 ? scan_typed(static_cast<const float*>(p), n)
                                 : scan_typed(static_cast<const double*>(p), n);
}

// "element 3 of [2, 3], float32"
std::string where_in(int64_t index, const Node& n) {
  return "element " + std::to_string(index) + " of " + n.shape.str() + ", " + dtype_name(n.dtype);
}

}  // namespace

const char* Node::op_name() const {
  if (op != nullptr) return op->name;
  switch (kind) {
    case NodeKind::Constant:
      return "constant";
    case NodeKind::Input:
      return "input";
    case NodeKind::Parameter:
      return "parameter";
    case NodeKind::Op:
      break;
  }
  return "op";
}

Tape::Tape() : generation_(next_generation.fetch_add(1)) {}
Tape::~Tape() = default;

Node& Tape::append(NodeKind kind, Shape shape, DType dtype) {
  if (nodes_.size() >= static_cast<size_t>(INT32_MAX)) throw Error("Tape: more than 2^31 nodes");
  Node& n = nodes_.emplace_back();
  n.kind = kind;
  n.shape = shape;
  n.dtype = dtype;
  n.scope = current_scope_;
  return n;
}

Tensor Tape::record(const OpDef& op, Shape shape, DType dtype,
                    std::initializer_list<Tensor> inputs) {
  return record(op, shape, dtype, std::span<const Tensor>(inputs.begin(), inputs.size()));
}

Tensor Tape::record(const OpDef& op, Shape shape, DType dtype, std::span<const Tensor> inputs) {
  bool needs_grad = false;
  auto* ids = arena_.allocate_array<int32_t>(static_cast<int64_t>(inputs.size()));
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& in = inputs[k];
    if (&in.tape() != this) {
      throw Error(std::string(op.name) + ": input " + std::to_string(k) +
                  " belongs to another tape (or was made on another current tape)");
    }
    const Node& in_node = in.node();  // throws for stale handles
    if (anomaly_mode) check_forward_value(in.id(), op.name, static_cast<int>(k));
    needs_grad = needs_grad || in_node.requires_grad;
    ids[k] = in.id();
  }
  needs_grad = needs_grad && grad_mode;
  Node& n = append(NodeKind::Op, shape, dtype);
  n.op = &op;
  n.requires_grad = needs_grad;
  n.inputs = ids;
  n.num_inputs = static_cast<int32_t>(inputs.size());
  n.value = arena_.allocate(static_cast<size_t>(shape.numel() * dtype_size(dtype)));
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
  if (impl->leaf_tape == this && impl->leaf_generation == generation_) {
    return Tensor(this, impl->leaf_node, generation_);
  }
  Node& n = append(NodeKind::Parameter, impl->shape, impl->dtype);
  n.requires_grad = impl->requires_grad;
  n.value = impl->value.data();
  n.grad = impl->grad.data();
  n.param = p.shared();
  n.name = impl->name;
  impl->leaf_tape = this;
  impl->leaf_generation = generation_;
  impl->leaf_node = size() - 1;
  return Tensor(this, impl->leaf_node, generation_);
}

void* Tape::grad_buffer(const Node& consumer, int k, const Shape& grad_shape) {
  Node& in = nodes_[static_cast<size_t>(consumer.inputs[k])];
  if (!in.requires_grad) return nullptr;
  if (grad_shape != in.shape) {
    throw Error(std::string(consumer.op_name()) + " backward: the gradient for input " +
                std::to_string(k) + (in.name.empty() ? "" : " \"" + in.name + "\"") +
                " has shape " + grad_shape.str() + " but the tensor has shape " + in.shape.str());
  }
  if (in.grad == nullptr) {
    in.grad = arena_.allocate_zeroed(static_cast<size_t>(in.shape.numel() * dtype_size(in.dtype)));
  }
  return in.grad;
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
  if (anomaly_mode) {
    check_forward_value(root.id(), nullptr, -1);
    for (double g : root_grad) {
      if (!std::isfinite(g)) {
        throw Error("anomaly: backward: the gradient given for " + describe_node(root.id()) + " " +
                    r.shape.str() + " holds NaN or Inf");
      }
    }
  }
  Node& seed = nodes_[static_cast<size_t>(root.id())];
  if (seed.grad == nullptr) {
    seed.grad =
        arena_.allocate_zeroed(static_cast<size_t>(seed.shape.numel() * dtype_size(seed.dtype)));
  }
  if (seed.dtype == DType::Float32) {
    add_seed(seed.grad_as<float>(), root_grad);
  } else {
    add_seed(seed.grad_as<double>(), root_grad);
  }
  for (int32_t i = root.id(); i >= 0; --i) {
    const Node& n = nodes_[static_cast<size_t>(i)];
    if (n.kind != NodeKind::Op || !n.requires_grad || n.grad == nullptr) continue;
    n.op->backward(*this, n);
    if (anomaly_mode) {
      for (int k = 0; k < n.num_inputs; ++k) check_gradient(i, k);
    }
  }
  if (!options.retain_graph) released_ = true;
}

void Tape::check_forward_value(int32_t id, const char* consumer, int k) {
  Node& n = nodes_[static_cast<size_t>(id)];
  if (n.anomaly_checked != 0) return;
  const NonFinite found = scan(n.value, n.dtype, n.shape.numel());
  bool allowed_inf = n.kind == NodeKind::Constant || n.kind == NodeKind::Input || n.produces_inf;
  if (found.first_nan < 0 && found.first_inf >= 0 && !allowed_inf && n.kind == NodeKind::Op) {
    // An op may pass on the infinities of its inputs (x + mask with -inf): only where inf first
    // appears is it an anomaly.
    for (int32_t j = 0; j < n.num_inputs && !allowed_inf; ++j) {
      const Node& in = nodes_[static_cast<size_t>(n.inputs[j])];
      allowed_inf =
          in.anomaly_checked == 2 ||
          (in.anomaly_checked == 0 && scan(in.value, in.dtype, in.shape.numel()).first_inf >= 0);
    }
  }
  if (found.first_nan >= 0 || (found.first_inf >= 0 && !allowed_inf)) {
    const bool nan = found.first_nan >= 0;
    const bool leaf = n.kind != NodeKind::Op;
    std::string what = "anomaly: forward: " + describe_node(id) +
                       (leaf ? " holds " : " produced ") + (nan ? "NaN" : "Inf") + " (first at " +
                       where_in(nan ? found.first_nan : found.first_inf, n) + ")";
    if (!nan && !leaf) what += " from finite inputs";
    if (consumer != nullptr) {
      what +=
          "; found when " + std::string(consumer) + " consumed it as input " + std::to_string(k);
    } else if (k == -1) {
      what += "; found when backward started from it";
    } else {
      what += "; found when its values were read";
    }
    throw Error(what);
  }
  if (n.kind != NodeKind::Parameter) n.anomaly_checked = found.first_inf >= 0 ? 2 : 1;
}

void Tape::check_gradient(int32_t consumer, int k) const {
  const Node& n = nodes_[static_cast<size_t>(consumer)];
  const int32_t in_id = n.inputs[k];
  const Node& in = nodes_[static_cast<size_t>(in_id)];
  if (in.grad == nullptr) return;
  const NonFinite found = scan(in.grad, in.dtype, in.shape.numel());
  if (found.first_nan < 0 && found.first_inf < 0) return;
  const bool nan = found.first_nan >= 0;
  throw Error("anomaly: backward: the backward of " + describe_node(consumer) + " produced " +
              (nan ? "NaN" : "Inf") + " in the gradient of its input " + std::to_string(k) + ", " +
              describe_node(in_id) + " (first at " +
              where_in(nan ? found.first_nan : found.first_inf, in) + ")");
}

void Tape::reset() {
  for (Node& n : nodes_) n.param.reset();
  nodes_.clear();
  arena_.reset();
  generation_ = next_generation.fetch_add(1);
  released_ = false;
  current_scope_ = -1;
}

void Tape::push_scope(std::string_view name) {
  for (size_t i = 0; i < scopes_.size(); ++i) {
    if (scopes_[i].parent == current_scope_ && scopes_[i].name == name) {
      current_scope_ = static_cast<int32_t>(i);
      return;
    }
  }
  scopes_.push_back(Scope{std::string(name), current_scope_});
  current_scope_ = static_cast<int32_t>(scopes_.size() - 1);
}

void Tape::pop_scope() {
  if (current_scope_ >= 0) current_scope_ = scopes_[static_cast<size_t>(current_scope_)].parent;
}

std::string Tape::scope_path(int32_t scope) const {
  std::string path;
  for (int32_t s = scope; s >= 0; s = scopes_[static_cast<size_t>(s)].parent) {
    path = path.empty() ? scopes_[static_cast<size_t>(s)].name
                        : scopes_[static_cast<size_t>(s)].name + "/" + path;
  }
  return path;
}

std::string Tape::describe_node(int32_t id) const {
  const Node& n = nodes_[static_cast<size_t>(id)];
  std::string s = std::string(n.op_name()) + " #" + std::to_string(id);
  if (!n.name.empty()) s += " \"" + n.name + "\"";
  if (n.scope >= 0) s += " in " + scope_path(n.scope);
  return s;
}

// --- Tensor ------------------------------------------------------------------------------------

Tensor::Tensor(const Parameter& p) : Tensor(current_tape().parameter(p)) {}

Tape& Tensor::tape() const {
  if (tape_ == nullptr) throw Error("Tensor: used before it was assigned (default-constructed)");
  return *tape_;
}

const Node& Tensor::node() const {
  const Tape& t = tape();
  if (t.generation_ != generation_) {
    throw Error("Tensor #" + std::to_string(id_) +
                ": its tape was reset (or cleared) after it was made; tensors live for one "
                "step, keep values across steps in a Parameter");
  }
  return t.nodes_[static_cast<size_t>(id_)];
}

void Tensor::check_dtype(DType requested) const {
  if (requested != dtype()) {
    throw Error("Tensor " + tape().describe_node(id_) + " " + shape().str() + ": is " +
                dtype_name(dtype()) + ", accessed as " + dtype_name(requested));
  }
}

std::vector<double> Tensor::values() const {
  const Node& n = node();
  if (anomaly_mode) tape_->check_forward_value(id_, nullptr, -2);
  return to_doubles(n.value, n.dtype, n.shape.numel());
}

double Tensor::item() const {
  const Node& n = node();
  if (n.shape.numel() != 1) {
    throw Error("item: " + tape().describe_node(id_) + " " + n.shape.str() +
                " has more than one element");
  }
  // Read the one value in place: values() would build a vector, and a training loop calls
  // item() every step (the heap-allocation test counts it).
  if (anomaly_mode) tape_->check_forward_value(id_, nullptr, -2);
  return n.dtype == DType::Float32 ? static_cast<double>(*static_cast<const float*>(n.value))
                                   : *static_cast<const double*>(n.value);
}

std::vector<double> Tensor::grad_values() const {
  const Node& n = node();
  if (n.grad == nullptr) return {};
  return to_doubles(n.grad, n.dtype, n.shape.numel());
}

Tensor& Tensor::set_name(std::string name) {
  node();  // validates the handle
  tape_->nodes_[static_cast<size_t>(id_)].name = std::move(name);
  return *this;
}

std::string Tensor::str() const {
  const Node& n = node();
  PrintOptions options;
  options.float64_suffix = n.dtype == DType::Float64;
  return format_torch(n.shape.dims(), values(), options);
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  return os << t.str();
}

// --- guards ------------------------------------------------------------------------------------

Tape& current_tape() {
  if (current_tape_ptr != nullptr) return *current_tape_ptr;
  thread_local Tape default_tape;
  return default_tape;
}

TapeScope::TapeScope(Tape& tape) : previous_(current_tape_ptr) {
  current_tape_ptr = &tape;
}
TapeScope::~TapeScope() {
  current_tape_ptr = previous_;
}

bool grad_enabled() {
  return grad_mode;
}
NoGradGuard::NoGradGuard() : previous_(grad_mode) {
  grad_mode = false;
}
NoGradGuard::~NoGradGuard() {
  grad_mode = previous_;
}

NameScope::NameScope(std::string_view name, Tape& tape) : tape_(tape) {
  tape_.push_scope(name);
}
NameScope::~NameScope() {
  tape_.pop_scope();
}

bool anomaly_mode_enabled() {
  return anomaly_mode;
}
AnomalyMode::AnomalyMode() : previous_(anomaly_mode) {
  anomaly_mode = true;
}
AnomalyMode::~AnomalyMode() {
  anomaly_mode = previous_;
}

}  // namespace tapegrad
