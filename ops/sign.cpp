// sign: elementwise −1, 0 or 1, torch.sign (sign(nan) = 0 and sign(−0) = +0, as torch 1.13's
// (0 < x) − (x < 0)); its gradient is zero everywhere.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void sign_backward(Tape& tape, const Node& node) {
  // Y = sign X  =>  dX += 0   (torch's zeros_like(grad): even an inf or nan dY gives 0)
  dispatch(node.dtype, [&]<class T>() { tape.input_grad<T>(node, 0).to_add(); });
}

void sign_grad_graph(GradGraph& g) {
  // Y = sign X  =>  dX += 0
  const Tensor x = g.input(0);
  const Shape shape = x.shape();
  g.add(0, zeros(shape, x.dtype()));
}

const OpDef kSign{.name = "sign", .backward = sign_backward, .grad_graph = sign_grad_graph};
TAPEGRAD_REGISTER_OP(kSign);

}  // namespace

Tensor sign(const Tensor& x) {
  return unary_forward_kernel(kSign, x, vmath::Unary::kSign);
}

}  // namespace tapegrad
