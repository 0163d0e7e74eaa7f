// log1p: elementwise ln(1 + x), torch.log1p: exact for small x where log(1 + x) rounds 1 + x first.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void log1p_backward(Tape& tape, const Node& node) {
  // Y = ln(1 + X)  =>  dX += dY / (X + 1)
  unary_backward_from_input(tape, node, []<class T>(T dy, T x) { return dy / (x + T(1)); });
}

void log1p_grad_graph(GradGraph& g) {
  // Y = ln(1 + X)  =>  dX += dY / (X + 1)
  g.add(0, div(g.grad(), g.input(0) + 1.0));
}

const OpDef kLog1p{.name = "log1p",
                   .backward = log1p_backward,
                   .saves = saves::kInput0,
                   .grad_graph = log1p_grad_graph};
TAPEGRAD_REGISTER_OP(kLog1p);

}  // namespace

Tensor log1p(const Tensor& x) {
  return unary_forward_kernel(kLog1p, x, vmath::Unary::kLog1p);
}

}  // namespace tapegrad
