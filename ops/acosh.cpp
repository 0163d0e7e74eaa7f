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
  unary_backward_from_input(
      tape, node, []<class T>(T dy, T x) { return dy * (T(1) / std::sqrt(x * x - T(1))); });
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
  return unary_forward(kAcosh, x, []<class T>(T v) { return std::acosh(v); });
}

}  // namespace tapegrad
