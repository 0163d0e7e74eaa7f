// acosh: elementwise inverse hyperbolic cosine, torch.acosh (NaN below 1).
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void acosh_backward(Tape& tape, const Node& node) {
  // Y = acosh X  =>  dX += dY ⊙ (X² − 1)^(−½)
  unary_backward_kernel(
      tape, node, false, []<class T>(T x) { return x * x - T(1); }, vmath::Unary::kSqrt,
      []<class T>(T dy, T root) { return dy * (T(1) / root); });
}

void acosh_grad_graph(GradGraph& g) {
  // Y = acosh X  =>  dX += dY ⊙ (X² − 1)^(−½)
  const Tensor x = g.input(0);
  g.add(0, mul(g.grad(), rsqrt(mul(x, x) - 1.0)));
}

const OpDef kAcosh{.name = "acosh",
                   .backward = acosh_backward,
                   .saves = saves::kInput0,
                   .grad_graph = acosh_grad_graph};
TAPEGRAD_REGISTER_OP(kAcosh);

}  // namespace

Tensor acosh(const Tensor& x) {
  return unary_forward_kernel(kAcosh, x, vmath::Unary::kAcosh);
}

}  // namespace tapegrad
