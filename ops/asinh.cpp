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
  unary_backward_from_input(
      tape, node, []<class T>(T dy, T x) { return dy * (T(1) / std::sqrt(x * x + T(1))); });
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
  return unary_forward(kAsinh, x, []<class T>(T v) { return std::asinh(v); });
}

}  // namespace tapegrad
