// acos: elementwise arccosine, torch.acos (NaN outside [−1, 1]).
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void acos_backward(Tape& tape, const Node& node) {
  // Y = acos X  =>  dX += −dY ⊙ (1 − X²)^(−½)
  unary_backward_kernel(
      tape, node, false, []<class T>(T x) { return -x * x + T(1); }, vmath::Unary::kSqrt,
      []<class T>(T dy, T root) { return dy * -(T(1) / root); });
}

void acos_grad_graph(GradGraph& g) {
  // Y = acos X  =>  dX += −dY ⊙ (1 − X²)^(−½)
  const Tensor x = g.input(0);
  g.add(0, mul(g.grad(), neg(rsqrt(1.0 - mul(x, x)))));
}

const OpDef kAcos{.name = "acos",
                  .backward = acos_backward,
                  .saves = saves::kInput0,
                  .grad_graph = acos_grad_graph};
TAPEGRAD_REGISTER_OP(kAcos);

}  // namespace

Tensor acos(const Tensor& x) {
  return unary_forward_kernel(kAcos, x, vmath::Unary::kAcos);
}

}  // namespace tapegrad
