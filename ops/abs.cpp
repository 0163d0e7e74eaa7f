// abs: elementwise |x|, torch.abs; its gradient at 0 is 0 (torch's dY ⊙ sgn(X)).
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void abs_backward(Tape& tape, const Node& node) {
  // Y = |X|  =>  dX += dY ⊙ sgn(X)   (sgn(0) = sgn(nan) = 0, ops/sign.cpp)
  unary_backward_from_input(tape, node,
                            []<class T>(T dy, T x) { return dy * (T(T(0) < x) - T(x < T(0))); });
}

void abs_grad_graph(GradGraph& g) {
  // Y = |X|  =>  dX += dY ⊙ sgn(X)   (sign's own gradient is zero: abs'' = 0)
  g.add(0, mul(g.grad(), sign(g.input(0))));
}

const OpDef kAbs{
    .name = "abs", .backward = abs_backward, .saves = saves::kInput0, .grad_graph = abs_grad_graph};
TAPEGRAD_REGISTER_OP(kAbs);

}  // namespace

Tensor abs(const Tensor& x) {
  return unary_forward_kernel(kAbs, x, vmath::Unary::kAbs);
}

}  // namespace tapegrad
