// sin: elementwise sine, torch.sin.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void sin_backward(Tape& tape, const Node& node) {
  // Y = sin X  =>  dX += dY ⊙ cos X
  unary_backward_kernel(
      tape, node, false, [](auto x) { return x; }, vmath::Unary::kCos,
      []<class T>(T dy, T cos_x) { return dy * cos_x; });
}

void sin_grad_graph(GradGraph& g) {
  // Y = sin X  =>  dX += dY ⊙ cos X
  g.add(0, mul(g.grad(), cos(g.input(0))));
}

const OpDef kSin{
    .name = "sin", .backward = sin_backward, .saves = saves::kInput0, .grad_graph = sin_grad_graph};
TAPEGRAD_REGISTER_OP(kSin);

}  // namespace

Tensor sin(const Tensor& x) {
  return unary_forward_kernel(kSin, x, vmath::Unary::kSin);
}

}  // namespace tapegrad
