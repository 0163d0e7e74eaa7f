// atan: elementwise arctangent, torch.atan.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void atan_backward(Tape& tape, const Node& node) {
  // Y = atan X  =>  dX += dY / (X² + 1)
  unary_backward_from_input(tape, node, []<class T>(T dy, T x) { return dy / (x * x + T(1)); });
}

void atan_grad_graph(GradGraph& g) {
  // Y = atan X  =>  dX += dY / (X² + 1)
  const Tensor x = g.input(0);
  g.add(0, div(g.grad(), mul(x, x) + 1.0));
}

const OpDef kAtan{.name = "atan",
                  .backward = atan_backward,
                  .saves = saves::kInput0,
                  .grad_graph = atan_grad_graph};
TAPEGRAD_REGISTER_OP(kAtan);

}  // namespace

Tensor atan(const Tensor& x) {
  return unary_forward_kernel(kAtan, x, vmath::Unary::kAtan);
}

}  // namespace tapegrad
