// atanh: elementwise inverse hyperbolic tangent, torch.atanh (±inf at ±1, NaN beyond).
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void atanh_backward(Tape& tape, const Node& node) {
  // Y = atanh X  =>  dX += dY / (1 − X²)
  unary_backward_from_input(tape, node, []<class T>(T dy, T x) { return dy / (T(1) - x * x); });
}

void atanh_grad_graph(GradGraph& g) {
  // Y = atanh X  =>  dX += dY / (1 − X²)
  const Tensor x = g.input(0);
  g.add(0, div(g.grad(), 1.0 - mul(x, x)));
}

const OpDef kAtanh{.name = "atanh",
                   .backward = atanh_backward,
                   .saves = saves::kInput0,
                   .grad_graph = atanh_grad_graph};
TAPEGRAD_REGISTER_OP(kAtanh);

}  // namespace

Tensor atanh(const Tensor& x) {
  return unary_forward_kernel(kAtanh, x, vmath::Unary::kAtanh);
}

}  // namespace tapegrad
