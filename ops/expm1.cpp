// expm1: elementwise eˣ − 1, torch.expm1: exact for small x where exp(x) − 1 cancels.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void expm1_backward(Tape& tape, const Node& node) {
  // Y = eˣ − 1  =>  dX += dY ⊙ (Y + 1)   (torch's, from the output)
  unary_backward_from_output(tape, node, []<class T>(T dy, T y) { return dy * (y + T(1)); });
}

void expm1_grad_graph(GradGraph& g) {
  // Y = eˣ − 1  =>  dX += dY ⊙ (Y + 1)
  g.add(0, mul(g.grad(), g.output() + 1.0));
}

const OpDef kExpm1{.name = "expm1",
                   .backward = expm1_backward,
                   .saves = saves::kOutput,
                   .grad_graph = expm1_grad_graph};
TAPEGRAD_REGISTER_OP(kExpm1);

}  // namespace

Tensor expm1(const Tensor& x) {
  return unary_forward_kernel(kExpm1, x, vmath::Unary::kExpm1);
}

}  // namespace tapegrad
