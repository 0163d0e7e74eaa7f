// cos: elementwise cosine, torch.cos.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void cos_backward(Tape& tape, const Node& node) {
  // Y = cos X  =>  dX += dY ⊙ (−sin X)
  unary_backward_kernel(
      tape, node, false, [](auto x) { return x; }, vmath::Unary::kSin,
      []<class T>(T dy, T sin_x) { return dy * -sin_x; });
}

void cos_grad_graph(GradGraph& g) {
  // Y = cos X  =>  dX += dY ⊙ (−sin X)
  g.add(0, mul(g.grad(), neg(sin(g.input(0)))));
}

const OpDef kCos{
    .name = "cos", .backward = cos_backward, .saves = saves::kInput0, .grad_graph = cos_grad_graph};
TAPEGRAD_REGISTER_OP(kCos);

}  // namespace

Tensor cos(const Tensor& x) {
  return unary_forward_kernel(kCos, x, vmath::Unary::kCos);
}

}  // namespace tapegrad
