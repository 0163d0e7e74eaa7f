// The recorded backward walk (grad, backward with create_graph) and torch.autograd.functional.
#include <tapegrad/ops/grad.h>

#include <algorithm>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/scope.h>
#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

GradGraph::GradGraph(Tape& tape, int32_t id, const Tensor& grad, std::vector<Tensor>& grads,
                     const std::vector<bool>& needed)
    : tape_(tape), id_(id), grad_(grad), grads_(grads), needed_(needed) {}

bool GradGraph::needs(int k) const {
  return needed_[static_cast<size_t>(tape_.node(id_).inputs[k])];
}

void GradGraph::add(int k, const Tensor& dx) {
  const int32_t in = tape_.node(id_).inputs[k];
  const Node& x = tape_.node(in);
  if (dx.shape() != x.shape || dx.dtype() != x.dtype) {
    throw Error(std::string(tape_.node(id_).op_name()) + ": its recorded backward gave input " +
                std::to_string(k) + " " + x.shape.str() + " a gradient of shape " +
                dx.shape().str() + " (" + dtype_name(dx.dtype()) + ")");
  }
  Tensor& sum = grads_[static_cast<size_t>(in)];
  sum = sum.defined() ? tapegrad::add(sum, dx) : dx;
}

namespace {

void check_not_released(const Tape& tape, const char* caller) {
  if (tape.released()) {
    throw Error(std::string(caller) +
                ": this tape was already walked by a backward pass that released its graph; "
                "pass retain_graph = true to the earlier one");
  }
}

// Walks `tape` back from `outputs`, seeded with `seeds`, calling each op's grad_graph: returns
// every node's gradient (undefined where none arrives). `targets` marks the nodes whose
// gradients are wanted: only ops on a path from them to the outputs run. Nodes up to `floor`
// count as leaves (grad_through differentiates only the composite it recorded above it).
std::vector<Tensor> recorded_backward(Tape& tape, std::span<const Tensor> outputs,
                                      std::span<const Tensor> seeds,
                                      const std::vector<bool>& targets, bool create_graph,
                                      const char* caller, int32_t floor = -1) {
  check_not_released(tape, caller);
  const int32_t top = static_cast<int32_t>(targets.size()) - 1;
  std::vector<bool> needed(targets.size());  // a target, or an op reaching one
  for (int32_t i = 0; i <= top; ++i) {
    const Node& n = tape.node(i);
    bool reaches = targets[static_cast<size_t>(i)];
    for (int k = 0; k < n.num_inputs && !reaches && i > floor; ++k) {
      reaches = needed[static_cast<size_t>(n.inputs[k])];
    }
    needed[static_cast<size_t>(i)] = reaches && n.requires_grad;
  }
  std::vector<Tensor> grads(targets.size());
  std::optional<NoGradGuard> no_grad;
  if (!create_graph) no_grad.emplace();
  // The recorded ops are drawn in a cluster per op they differentiate, inside one "backward"
  // cluster, as torchviz draws a gradient beside the forward ops it reads.
  NameScope backward_scope("backward", tape);
  for (size_t o = 0; o < outputs.size(); ++o) {
    Tensor& g = grads[static_cast<size_t>(outputs[o].id())];
    g = g.defined() ? add(g, seeds[o]) : seeds[o];
  }
  for (int32_t i = top; i > floor; --i) {
    const Tensor dy = grads[static_cast<size_t>(i)];
    const Node& n = tape.node(i);
    if (!dy.defined() || n.kind != NodeKind::Op || !needed[static_cast<size_t>(i)]) continue;
    bool any = false;
    for (int k = 0; k < n.num_inputs; ++k) any = any || needed[static_cast<size_t>(n.inputs[k])];
    if (!any) continue;
    if (n.op->grad_graph == nullptr) {
      throw Error(std::string(caller) + ": " + tape.describe_node(i) +
                  " has no recorded backward, so it cannot be differentiated "
                  "twice or through grad(); ops/DERIVATIVES.md lists the ops that have one");
    }
    GradGraph g(tape, i, dy, grads, needed);
    const GradGraphFn formula = n.op->grad_graph;
    NameScope op_scope(std::string(n.op_name()) + " #" + std::to_string(i), tape);
    formula(g);
  }
  return grads;
}

// The outputs' seeds: grad_outputs, or ones for one-element outputs.
std::vector<Tensor> seeds_for(std::span<const Tensor> outputs, std::span<const Tensor> grad_outputs,
                              const char* caller) {
  if (!grad_outputs.empty() && grad_outputs.size() != outputs.size()) {
    throw Error(std::string(caller) + ": " + std::to_string(grad_outputs.size()) +
                " output gradients for " + std::to_string(outputs.size()) + " outputs");
  }
  std::vector<Tensor> seeds;
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Tensor& out = outputs[o];
    if (&out.tape() != &outputs[0].tape()) {
      throw Error(std::string(caller) + ": the outputs belong to different tapes");
    }
    if (!out.requires_grad()) {
      throw Error(std::string(caller) + ": output " + std::to_string(o) + " " +
                  out.tape().describe_node(out.id()) +
                  " does not require grad (no input that requires grad reaches it)");
    }
    if (!grad_outputs.empty() && grad_outputs[o].defined()) {
      const Tensor& g = grad_outputs[o];
      if (g.shape() != out.shape() || g.dtype() != out.dtype()) {
        throw Error(std::string(caller) + ": output " + std::to_string(o) + " " +
                    out.shape().str() + " (" + dtype_name(out.dtype()) + ") got a gradient " +
                    g.shape().str() + " (" + dtype_name(g.dtype()) + ")");
      }
      seeds.push_back(g);
      continue;
    }
    if (out.numel() != 1) {
      throw Error(std::string(caller) + ": output " + std::to_string(o) + " " + out.shape().str() +
                  " is not a scalar; pass its gradient in grad_outputs");
    }
    TapeScope scope(out.tape());
    seeds.push_back(ones(out.shape(), out.dtype()));
  }
  return seeds;
}

void finish(Tape& tape, const GradOptions& options) {
  if (!options.retain_graph.value_or(options.create_graph)) tape.mark_released();
}

// grad() of one output without create_graph: the ops' kernel backwards, as backward() runs them,
// so that differentiating a recorded backward (an HVP's second pass) costs what a first-order
// pass costs. No .grad may change: for the walk every leaf's gradient slot is emptied (a
// parameter's node counts as a plain input, so its gradient lands on the tape instead of the
// Parameter), and afterwards every node's slot and kind are put back.
std::vector<Tensor> kernel_grad(Tape& tape, const Tensor& output, const Tensor& seed,
                                std::span<const Tensor> inputs, bool retain_graph) {
  const int32_t top = output.id();
  struct Saved {
    void* grad;
    NodeKind kind;
  };
  std::vector<Saved> saved(static_cast<size_t>(top) + 1);
  // The walk frees each op output's gradient once its op has run: an op output asked for must
  // keep its own.
  bool retain = retain_graph;
  for (const Tensor& x : inputs) retain = retain || tape.node(x.id()).kind == NodeKind::Op;
  struct Restore {
    Tape& tape;
    std::vector<Saved>& saved;
    ~Restore() {
      for (size_t i = 0; i < saved.size(); ++i) {
        Node& n = tape.node(static_cast<int32_t>(i));
        n.grad = saved[i].grad;
        n.kind = saved[i].kind;
      }
    }
  } restore{tape, saved};
  for (int32_t i = 0; i <= top; ++i) {
    Node& n = tape.node(i);
    saved[static_cast<size_t>(i)] = {n.grad, n.kind};
    if (n.kind == NodeKind::Op) continue;
    n.grad = nullptr;
    if (n.kind == NodeKind::Parameter) n.kind = NodeKind::Input;
  }
  tape.backward(output, seed.values(), {.retain_graph = retain});
  std::vector<Tensor> result;
  for (const Tensor& x : inputs) {
    if (x.id() > top) {  // made after the output: no gradient
      result.emplace_back();
      continue;
    }
    const Node& n = tape.node(x.id());
    const Shape shape = n.shape;
    const DType dtype = n.dtype;
    const void* g = n.grad;
    result.push_back(g == nullptr ? Tensor() : tape.leaf(shape, dtype, g, false));
  }
  return result;
}

}  // namespace

void grad_through(GradGraph& g, const std::function<Tensor(std::span<const Tensor>)>& composite) {
  Tape& tape = g.output().tape();
  const int num_inputs = g.node().num_inputs;
  std::vector<Tensor> inputs;
  for (int k = 0; k < num_inputs; ++k) inputs.push_back(g.input(k));
  const int32_t floor = tape.size() - 1;
  Tensor y;
  {
    // The composite needs its graph whatever the mode, so that it can be walked back.
    EnableGradGuard enable;
    y = composite(inputs);
  }
  const Tensor dy = g.grad();
  std::vector<bool> targets(static_cast<size_t>(y.id()) + 1);
  for (int k = 0; k < num_inputs; ++k) targets[static_cast<size_t>(inputs[k].id())] = g.needs(k);
  const std::vector<Tensor> grads =
      recorded_backward(tape, std::span<const Tensor>(&y, 1), std::span<const Tensor>(&dy, 1),
                        targets, grad_enabled(), g.node().op_name(), floor);
  std::vector<int32_t> done;  // an input taken twice gets its gradient once
  for (int k = 0; k < num_inputs; ++k) {
    const int32_t id = inputs[static_cast<size_t>(k)].id();
    const Tensor& dx = grads[static_cast<size_t>(id)];
    if (!g.needs(k) || !dx.defined() || std::find(done.begin(), done.end(), id) != done.end()) {
      continue;
    }
    done.push_back(id);
    g.add(k, dx);
  }
}

std::vector<Tensor> grad(std::span<const Tensor> outputs, std::span<const Tensor> inputs,
                         std::span<const Tensor> grad_outputs, const GradOptions& options) {
  if (outputs.empty()) throw Error("grad: no outputs");
  Tape& tape = outputs[0].tape();
  const std::vector<Tensor> seeds = seeds_for(outputs, grad_outputs, "grad");
  int32_t top = 0;
  for (const Tensor& o : outputs) top = std::max(top, o.id());
  std::vector<bool> targets(static_cast<size_t>(top) + 1);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& x = inputs[k];
    if (&x.tape() != &tape) throw Error("grad: input " + std::to_string(k) + " is on another tape");
    if (!x.requires_grad()) {
      throw Error("grad: input " + std::to_string(k) + " " + tape.describe_node(x.id()) + " " +
                  x.shape().str() + " does not require grad");
    }
    if (x.id() <= top) targets[static_cast<size_t>(x.id())] = true;
  }
  // An input the outputs do not reach is an Error before anything is recorded.
  std::vector<bool> reached(targets.size());
  for (const Tensor& o : outputs) reached[static_cast<size_t>(o.id())] = true;
  for (int32_t i = top; i >= 0; --i) {
    const Node& n = tape.node(i);
    if (!reached[static_cast<size_t>(i)] || n.kind != NodeKind::Op || !n.requires_grad) continue;
    for (int k = 0; k < n.num_inputs; ++k) reached[static_cast<size_t>(n.inputs[k])] = true;
  }
  for (size_t k = 0; k < inputs.size() && !options.allow_unused; ++k) {
    const int32_t id = inputs[k].id();
    if (id > top || !reached[static_cast<size_t>(id)]) {
      throw Error("grad: input " + std::to_string(k) + " " + tape.describe_node(id) + " " +
                  inputs[k].shape().str() +
                  " is not reached from the outputs; pass allow_unused = true");
    }
  }
  TapeScope scope(tape);
  check_not_released(tape, "grad");
  // The kernel path only where the recorded one would run too: an op without a recorded
  // backward (a checkpoint, whose kernel backward accumulates into the Parameters) keeps its Error.
  bool kernels = !options.create_graph && outputs.size() == 1;
  for (int32_t i = 0; i <= top && kernels; ++i) {
    const Node& n = tape.node(i);
    kernels = n.kind != NodeKind::Op || n.op->grad_graph != nullptr;
  }
  const std::vector<Tensor> grads =
      kernels
          ? kernel_grad(tape, outputs[0], seeds[0], inputs, options.retain_graph.value_or(false))
          : recorded_backward(tape, outputs, seeds, targets, options.create_graph, "grad");
  std::vector<Tensor> result;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const int32_t id = inputs[k].id();
    result.push_back(kernels ? grads[k] : id <= top ? grads[static_cast<size_t>(id)] : Tensor());
    if (!result.back().defined() && !options.allow_unused) {  // reached, but only as a mask
      throw Error("grad: no gradient flows to input " + std::to_string(k) + " " +
                  tape.describe_node(id) +
                  " (it is only a condition or mask); pass "
                  "allow_unused = true");
    }
  }
  finish(tape, options);
  return result;
}

std::vector<Tensor> grad(const Tensor& output, std::initializer_list<Tensor> inputs,
                         const GradOptions& options) {
  return grad(std::span<const Tensor>(&output, 1),
              std::span<const Tensor>(inputs.begin(), inputs.size()), {}, options);
}

void backward(std::span<const Tensor> tensors, std::span<const Tensor> grad_tensors,
              const GradOptions& options) {
  if (tensors.empty()) throw Error("backward: no tensors");
  Tape& tape = tensors[0].tape();
  if (!options.create_graph && tensors.size() == 1 && grad_tensors.empty()) {
    tape.backward(tensors[0], {.retain_graph = options.retain_graph.value_or(false)});
    return;
  }
  const std::vector<Tensor> seeds = seeds_for(tensors, grad_tensors, "backward");
  int32_t top = 0;
  for (const Tensor& t : tensors) top = std::max(top, t.id());
  std::vector<bool> leaves(static_cast<size_t>(top) + 1);
  for (int32_t i = 0; i <= top; ++i) {
    const Node& n = tape.node(i);
    leaves[static_cast<size_t>(i)] = n.kind != NodeKind::Op && n.requires_grad;
  }
  TapeScope scope(tape);
  const std::vector<Tensor> grads =
      recorded_backward(tape, tensors, seeds, leaves, options.create_graph, "backward");
  for (int32_t i = 0; i <= top; ++i) {
    const Tensor& g = grads[static_cast<size_t>(i)];
    if (!leaves[static_cast<size_t>(i)] || !g.defined()) continue;
    const std::vector<double> values = g.values();
    Node& n = tape.node(i);
    if (n.kind == NodeKind::Parameter) {
      n.grad = n.param->grad_data();  // a pending zero_grad or clip scale applied first
    } else if (n.grad == nullptr) {
      n.grad = tape.arena().allocate_zeroed(n.bytes());
    }
    from_doubles(values, n.grad, n.dtype, /*add=*/true);
  }
  finish(tape, options);
}

// --- torch.autograd.functional ----------------------------------------------------------------

namespace {

// The functional API's grad() calls: the graph kept (it is the user's tape too), inputs the output
// does not reach allowed (they get zeros).
GradOptions inner(bool create_graph) {
  GradOptions o;
  o.create_graph = create_graph;
  o.retain_graph = true;
  o.allow_unused = true;
  return o;
}

// torch's _grad_preprocess: inputs become leaves that require grad; with create_graph, those
// that already require grad stay, so the results remain differentiable w.r.t. them.
std::vector<Tensor> prepare(std::span<const Tensor> inputs, bool create_graph, const char* caller) {
  if (inputs.empty()) throw Error(std::string(caller) + ": no inputs");
  std::vector<Tensor> out;
  for (const Tensor& x : inputs) {
    TapeScope scope(x.tape());
    out.push_back(create_graph && x.requires_grad() ? x : requires_grad(x));
  }
  return out;
}

Tensor call(const TensorFunction& f, std::span<const Tensor> inputs, const char* caller) {
  Tensor y = f(inputs);
  if (!y.defined()) throw Error(std::string(caller) + ": the function returned no tensor");
  if (&y.tape() != &inputs[0].tape()) {
    throw Error(std::string(caller) + ": the function's output is on another tape than its inputs");
  }
  return y;
}

// torch's _fill_in_zeros: an input the output does not depend on gets zeros.
std::vector<Tensor> zeros_for_unused(std::vector<Tensor> grads, std::span<const Tensor> like) {
  for (size_t k = 0; k < grads.size(); ++k) {
    if (grads[k].defined()) continue;
    TapeScope scope(like[k].tape());
    grads[k] = zeros(like[k].shape(), like[k].dtype());
  }
  return grads;
}

void check_vectors(std::span<const Tensor> v, std::span<const Tensor> like, const char* caller) {
  if (v.size() != like.size()) {
    throw Error(std::string(caller) + ": " + std::to_string(v.size()) + " vectors for " +
                std::to_string(like.size()) + " inputs");
  }
  for (size_t k = 0; k < v.size(); ++k) {
    if (v[k].shape() != like[k].shape() || v[k].dtype() != like[k].dtype()) {
      throw Error(std::string(caller) + ": v[" + std::to_string(k) + "] " + v[k].shape().str() +
                  " (" + dtype_name(v[k].dtype()) + ") does not match input " + std::to_string(k) +
                  " " + like[k].shape().str() + " (" + dtype_name(like[k].dtype()) + ")");
    }
  }
}

void check_scalar(const Tensor& y, const char* caller) {
  if (y.numel() != 1) {
    throw Error(std::string(caller) + ": the function must return one element, got " +
                y.shape().str());
  }
}

// Undefined gradients (unused inputs) dropped, with their partners, for a grad() call.
struct Pairs {
  std::vector<Tensor> outputs, seeds;
};
Pairs defined_pairs(std::span<const Tensor> outputs, std::span<const Tensor> seeds) {
  Pairs p;
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!outputs[k].defined() || !outputs[k].requires_grad()) continue;
    p.outputs.push_back(outputs[k]);
    p.seeds.push_back(seeds[k]);
  }
  return p;
}

Shape joined(const Shape& a, const Shape& b) {
  std::vector<int64_t> dims(a.dims().begin(), a.dims().end());
  dims.insert(dims.end(), b.dims().begin(), b.dims().end());
  if (static_cast<int>(dims.size()) > kMaxRank) {
    throw Error("jacobian/hessian: " + a.str() + " and " + b.str() + " make a result of rank " +
                std::to_string(dims.size()) + ", more than tensors hold (" +
                std::to_string(kMaxRank) + ")");
  }
  return Shape(std::span<const int64_t>(dims));
}

// d(outputs[o])/d(inputs) for every element o of one output, one backward each: rows of the
// result, which has shape output.shape + input.shape per input.
std::vector<Tensor> rows_of(const Tensor& output, std::span<const Tensor> inputs) {
  Tape& tape = output.tape();
  TapeScope scope(tape);
  std::vector<std::vector<double>> rows(inputs.size());
  const int64_t n = output.numel();
  for (int64_t e = 0; e < n; ++e) {
    std::vector<double> one_hot(static_cast<size_t>(n));
    one_hot[static_cast<size_t>(e)] = 1.0;
    const Tensor seed = from_values(output.shape(), one_hot, output.dtype());
    std::vector<Tensor> g = output.requires_grad()
                                ? grad(std::span<const Tensor>(&output, 1), inputs,
                                       std::span<const Tensor>(&seed, 1), inner(false))
                                : std::vector<Tensor>(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k) {
      const std::vector<double> values =
          g[k].defined() ? g[k].values()
                         : std::vector<double>(static_cast<size_t>(inputs[k].numel()));
      rows[k].insert(rows[k].end(), values.begin(), values.end());
    }
  }
  std::vector<Tensor> result;
  for (size_t k = 0; k < inputs.size(); ++k) {
    result.push_back(
        from_values(joined(output.shape(), inputs[k].shape()), rows[k], inputs[k].dtype()));
  }
  return result;
}

}  // namespace

FunctionalResult vjp(const TensorFunction& f, std::span<const Tensor> inputs, const Tensor& v,
                     bool create_graph) {
  const std::vector<Tensor> x = prepare(inputs, create_graph, "vjp");
  const Tensor y = call(f, x, "vjp");
  if (!y.requires_grad()) return {y, zeros_for_unused(std::vector<Tensor>(x.size()), x)};
  return {y, zeros_for_unused(grad(std::span<const Tensor>(&y, 1), x,
                                   std::span<const Tensor>(&v, 1), inner(create_graph)),
                              x)};
}

FunctionalResult jvp(const TensorFunction& f, std::span<const Tensor> inputs,
                     std::span<const Tensor> v, bool create_graph) {
  check_vectors(v, inputs, "jvp");
  const std::vector<Tensor> x = prepare(inputs, create_graph, "jvp");
  const Tensor y = call(f, x, "jvp");
  Tensor u;  // the dummy output gradient: uᵀ·J is linear in u, and d(uᵀ·J·v)/du = J·v
  {
    TapeScope scope(y.tape());
    u = requires_grad(zeros(y.shape(), y.dtype()));
  }
  if (!y.requires_grad()) return {y, zeros_for_unused({Tensor()}, std::span<const Tensor>(&y, 1))};
  const std::vector<Tensor> ujac =
      grad(std::span<const Tensor>(&y, 1), x, std::span<const Tensor>(&u, 1), inner(true));
  const Pairs p = defined_pairs(ujac, v);
  if (p.outputs.empty()) return {y, zeros_for_unused({Tensor()}, std::span<const Tensor>(&y, 1))};
  return {y, zeros_for_unused(
                 grad(p.outputs, std::span<const Tensor>(&u, 1), p.seeds, inner(create_graph)),
                 std::span<const Tensor>(&y, 1))};
}

FunctionalResult vhp(const TensorFunction& f, std::span<const Tensor> inputs,
                     std::span<const Tensor> v, bool create_graph) {
  check_vectors(v, inputs, "vhp");
  const std::vector<Tensor> x = prepare(inputs, create_graph, "vhp");
  const Tensor y = call(f, x, "vhp");
  check_scalar(y, "vhp");
  if (!y.requires_grad()) return {y, zeros_for_unused(std::vector<Tensor>(x.size()), x)};
  const std::vector<Tensor> jac = grad(std::span<const Tensor>(&y, 1), x, {}, inner(true));
  const Pairs p = defined_pairs(jac, v);
  if (p.outputs.empty()) return {y, zeros_for_unused(std::vector<Tensor>(x.size()), x)};
  return {y, zeros_for_unused(grad(p.outputs, x, p.seeds, inner(create_graph)), x)};
}

FunctionalResult hvp(const TensorFunction& f, std::span<const Tensor> inputs,
                     std::span<const Tensor> v, bool create_graph) {
  check_vectors(v, inputs, "hvp");
  const std::vector<Tensor> x = prepare(inputs, create_graph, "hvp");
  const Tensor y = call(f, x, "hvp");
  check_scalar(y, "hvp");
  if (!y.requires_grad()) return {y, zeros_for_unused(std::vector<Tensor>(x.size()), x)};
  const std::vector<Tensor> jac = grad(std::span<const Tensor>(&y, 1), x, {}, inner(true));
  std::vector<Tensor> u;  // dummy gradients of jac: uᵀ·H is linear in u, d(uᵀ·H·v)/du = H·v
  std::vector<Tensor> used;
  for (size_t k = 0; k < x.size(); ++k) {
    if (!jac[k].defined() || !jac[k].requires_grad()) continue;
    TapeScope scope(y.tape());
    u.push_back(requires_grad(zeros(x[k].shape(), x[k].dtype())));
    used.push_back(jac[k]);
  }
  if (used.empty()) return {y, zeros_for_unused(std::vector<Tensor>(x.size()), x)};
  const std::vector<Tensor> uh = grad(used, x, u, inner(true));
  const Pairs p = defined_pairs(uh, v);
  if (p.outputs.empty()) return {y, zeros_for_unused(std::vector<Tensor>(x.size()), x)};
  const std::vector<Tensor> hv_used = grad(p.outputs, u, p.seeds, inner(create_graph));
  std::vector<Tensor> hv(x.size());
  for (size_t k = 0, j = 0; k < x.size(); ++k) {
    if (jac[k].defined() && jac[k].requires_grad()) hv[k] = hv_used[j++];
  }
  return {y, zeros_for_unused(hv, x)};
}

std::vector<Tensor> jacobian(const TensorFunction& f, std::span<const Tensor> inputs) {
  const std::vector<Tensor> x = prepare(inputs, false, "jacobian");
  return rows_of(call(f, x, "jacobian"), x);
}

std::vector<std::vector<Tensor>> hessian(const TensorFunction& f, std::span<const Tensor> inputs) {
  const std::vector<Tensor> x = prepare(inputs, false, "hessian");
  const Tensor y = call(f, x, "hessian");
  check_scalar(y, "hessian");
  std::vector<Tensor> jac(x.size());
  if (y.requires_grad()) {
    jac = grad(std::span<const Tensor>(&y, 1), x, {}, inner(true));
  }
  std::vector<std::vector<Tensor>> h;
  for (size_t i = 0; i < x.size(); ++i) {
    if (jac[i].defined()) {
      h.push_back(rows_of(jac[i], x));
      continue;
    }
    TapeScope scope(y.tape());
    std::vector<Tensor> zero_row;
    for (const Tensor& xj : x)
      zero_row.push_back(zeros(joined(x[i].shape(), xj.shape()), xj.dtype()));
    h.push_back(zero_row);
  }
  return h;
}

GradcheckReport gradgradcheck(const std::string& name, const GradcheckFunction& f,
                              const std::vector<GradcheckInput>& inputs,
                              const GradcheckOptions& options, uint64_t seed) {
  // The output's shape, for v: f once on a scratch tape.
  Shape out_shape;
  {
    Tape scratch;
    TapeScope scope(scratch);
    std::vector<Tensor> x;
    for (const GradcheckInput& in : inputs) {
      x.push_back(from_values(in.shape, in.values, DType::Float64, in.requires_grad));
    }
    out_shape = f(x).shape();
  }
  std::vector<GradcheckInput> with_v = inputs;
  with_v.push_back(random_input(out_shape, seed));
  const size_t n = inputs.size();
  // G(x, v) = vᵀ·∂f/∂x for every input that requires grad, flattened and joined: one output.
  const auto g = [&](std::span<const Tensor> in) {
    const std::span<const Tensor> x = in.first(n);
    const Tensor y = f(x);
    std::vector<Tensor> wrt;
    for (const Tensor& t : x) {
      if (t.requires_grad()) wrt.push_back(t);
    }
    const std::vector<Tensor> grads =
        grad(std::span<const Tensor>(&y, 1), wrt, in.subspan(n, 1), inner(/*create_graph=*/true));
    std::vector<Tensor> flat;
    for (size_t k = 0; k < grads.size(); ++k) {
      flat.push_back(
          reshape(grads[k].defined() ? grads[k] : zeros(wrt[k].shape(), DType::Float64), {-1}));
    }
    return cat(flat, 0);
  };
  return gradcheck(name + " (second order)", g, with_v, options);
}

}  // namespace tapegrad
