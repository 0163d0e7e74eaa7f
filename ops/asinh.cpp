// asinh: elementwise inverse hyperbolic sine, torch.asinh.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void asinh_backward(Tape& tape, const Node& node) {
  // Y = asinh X  =>  dX += dY ⊙ (X² + 1)^(−½)
  unary_backward_kernel(
      tape, node, false, []<class T>(T x) { return x * x + T(1); }, vmath::Unary::kSqrt,
      []<class T>(T dy, T root) { return dy * (T(1) / root); });
}

void asinh_grad_graph(GradGraph& g) {
  // Y = asinh X  =>  dX += dY ⊙ (X² + 1)^(−½)
  const Tensor x = g.input(0);
  g.add(0, mul(g.grad(), rsqrt(mul(x, x) + 1.0)));
}

const OpDef kAsinh{.name = "asinh",
                   .backward = asinh_backward,
                   .saves = saves::kInput0,
                   .grad_graph = asinh_grad_graph};
TAPEGRAD_REGISTER_OP(kAsinh);

}  // namespace

Tensor asinh(const Tensor& x) {
  return unary_forward_kernel(kAsinh, x, vmath::Unary::kAsinh);
}

}  // namespace tapegrad
