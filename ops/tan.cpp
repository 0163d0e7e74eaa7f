// tan: elementwise tangent, torch.tan.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void tan_backward(Tape& tape, const Node& node) {
  // Y = tan X  =>  dX += dY ⊙ (1 + Y²)   (torch's, from the output)
  unary_backward_from_output(tape, node, []<class T>(T dy, T y) { return dy * (T(1) + y * y); });
}

void tan_grad_graph(GradGraph& g) {
  // Y = tan X  =>  dX += dY ⊙ (1 + Y²)
  const Tensor y = g.output();
  g.add(0, mul(g.grad(), 1.0 + mul(y, y)));
}

const OpDef kTan{
    .name = "tan", .backward = tan_backward, .saves = saves::kOutput, .grad_graph = tan_grad_graph};
TAPEGRAD_REGISTER_OP(kTan);

}  // namespace

Tensor tan(const Tensor& x) {
  return unary_forward_kernel(kTan, x, vmath::Unary::kTan);
}

}  // namespace tapegrad
