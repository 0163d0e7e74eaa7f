// Gradients as tensors: torch.autograd.grad and backward with create_graph, torch.autograd.
// functional's vjp, jvp, hvp, vhp, jacobian and hessian, and the interface differentiable
// backwards are written against (GradGraph).
//
//   Tensor y = sum(x * x * x);
//   Tensor dx = grad(y, {x}, {.create_graph = true})[0];  // 3x², itself on the tape
//   Tensor d2x = grad(sum(dx), {x})[0];                    // 6x
//
// How it works (docs/design.md, "Gradients of gradients"): every op's OpDef carries, besides its
// fast first-order backward on buffers, `grad_graph`: the same formula written with ops. grad()
// walks the tape in reverse and calls it, so the backward pass is recorded on the same tape (with
// create_graph, as nodes that require grad) and can be differentiated again, to any order.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <vector>

#include <tapegrad/graph/gradcheck.h>
#include <tapegrad/graph/tape.h>

namespace tapegrad {

struct GradOptions {
  // Record the backward pass so that its results can be differentiated again.
  bool create_graph = false;
  // Keep the graph for another backward through it; default: create_graph (as torch). Without
  // it, the tape counts as released and a later backward through it is an Error.
  std::optional<bool> retain_graph = std::nullopt;
  // An input the outputs do not depend on gets an undefined Tensor instead of an Error.
  bool allow_unused = false;
};

// torch.autograd.grad: the gradients of `outputs` (weighted by `grad_outputs`, of their shapes;
// may be empty for outputs of one element, which get 1) w.r.t. `inputs` (leaves or intermediate
// tensors of the same tape), without touching any .grad. Throws Error naming the op when an op on
// the way has no recorded backward (ops/DERIVATIVES.md lists them).
std::vector<Tensor> grad(std::span<const Tensor> outputs, std::span<const Tensor> inputs,
                         std::span<const Tensor> grad_outputs = {},
                         const GradOptions& options = {});
std::vector<Tensor> grad(const Tensor& output, std::initializer_list<Tensor> inputs,
                         const GradOptions& options = {});

// torch.autograd.backward: accumulates the gradients of `tensors` into every leaf's .grad (a
// Parameter's gradient, or an input leaf's grad()). Without create_graph this is Tensor::
// backward's fast pass (one tensor). With it, the gradients are recorded first, as grad() does;
// .grad then holds their values (use grad() to get them as tensors in the graph).
void backward(std::span<const Tensor> tensors, std::span<const Tensor> grad_tensors = {},
              const GradOptions& options = {});

// --- torch.autograd.functional ----------------------------------------------------------------
// `f` maps the inputs to one output; it records on the inputs' tape. Inputs that do not require
// grad are replaced by leaf copies that do, as torch detaches them; with create_graph, inputs
// that require grad are used as they are, so the results stay differentiable w.r.t. them.
using TensorFunction = std::function<Tensor(std::span<const Tensor>)>;

struct FunctionalResult {
  Tensor output;                // f(inputs)
  std::vector<Tensor> results;  // one per input (jvp, hvp and vhp: see below)
};

// vᵀ·J per input (v: the output's shape).
FunctionalResult vjp(const TensorFunction& f, std::span<const Tensor> inputs, const Tensor& v,
                     bool create_graph = false);
// J·v (v: one tensor per input, of its shape): results holds one tensor, of the output's shape.
// Computed by the double-vjp trick, J·v = d/du (uᵀ·J)·v, as torch's jvp does: one recorded
// backward (u is a dummy output gradient) and one backward through it, so every op with a
// second derivative has a jvp without a forward-mode rule of its own.
FunctionalResult jvp(const TensorFunction& f, std::span<const Tensor> inputs,
                     std::span<const Tensor> v, bool create_graph = false);
// For scalar f: H·v and vᵀ·H per input (v: one tensor per input). H is symmetric where f is
// twice continuously differentiable, so they agree there; torch computes them differently (hvp by
// the double-vjp trick, vhp directly) and so does this.
FunctionalResult hvp(const TensorFunction& f, std::span<const Tensor> inputs,
                     std::span<const Tensor> v, bool create_graph = false);
FunctionalResult vhp(const TensorFunction& f, std::span<const Tensor> inputs,
                     std::span<const Tensor> v, bool create_graph = false);
// Small inputs only: one backward per output element. jacobian(f)[i] has shape
// output.shape + inputs[i].shape; hessian(f)[i][j] (scalar f) inputs[i].shape + inputs[j].shape.
std::vector<Tensor> jacobian(const TensorFunction& f, std::span<const Tensor> inputs);
std::vector<std::vector<Tensor>> hessian(const TensorFunction& f, std::span<const Tensor> inputs);

// --- second-order gradient checking ---------------------------------------------------------
// torch.autograd.gradgradcheck: checks the recorded backward of f by gradcheck, the gradients of
// (inputs, v) ↦ grad(f(inputs), inputs, v, create_graph) against central differences, w.r.t. the
// inputs that require grad and the output gradient v (random, from `seed`, as torch draws it).
// Same defaults as gradcheck (float64).
GradcheckReport gradgradcheck(const std::string& name, const GradcheckFunction& f,
                              const std::vector<GradcheckInput>& inputs,
                              const GradcheckOptions& options = {}, uint64_t seed = 7);

// --- writing a differentiable backward --------------------------------------------------------
// What OpDef::grad_graph sees of one node: its inputs, output and output gradient as tensors, and
// where to add each input's gradient. Write the formula with ops, e.g. mul's:
//   if (g.needs(0)) g.add(0, sum_to_size(mul(g.grad(), g.input(1)), g.input(0).shape()));
// Recording appends nodes and may move the tape's nodes: read node() and state() again after
// calling an op, and copy a shape into a local before the statement that records
// (`const Shape shape = g.input(0).shape();`): a reference to it taken in the same call as an op
// may dangle.
class GradGraph {
 public:
  GradGraph(Tape& tape, int32_t id, const Tensor& grad, std::vector<Tensor>& grads,
            const std::vector<bool>& needed);
  const Node& node() const { return tape_.node(id_); }
  template <class State>
  const State& state() const {
    return node().state_as<State>();  // in the arena: stays put while nodes move
  }
  Tensor input(int k) const { return tape_.tensor(tape_.node(id_).inputs[k]); }
  Tensor output() const { return tape_.tensor(id_); }
  const Tensor& grad() const { return grad_; }  // dL/dY
  bool needs(int k) const;                      // whether input k's gradient is wanted
  void add(int k, const Tensor& dx);            // dL/dX_k += dx (dx: input k's shape)

 private:
  Tape& tape_;
  int32_t id_;
  Tensor grad_;
  std::vector<Tensor>& grads_;
  const std::vector<bool>& needed_;
};

}  // namespace tapegrad
