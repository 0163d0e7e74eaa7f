// sinh: elementwise hyperbolic sine, torch.sinh.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void sinh_backward(Tape& tape, const Node& node) {
  // Y = sinh X  =>  dX += dY ⊙ cosh X
  unary_backward_kernel(
      tape, node, false, [](auto x) { return x; }, vmath::Unary::kCosh,
      []<class T>(T dy, T cosh_x) { return dy * cosh_x; });
}

void sinh_grad_graph(GradGraph& g) {
  // Y = sinh X  =>  dX += dY ⊙ cosh X
  g.add(0, mul(g.grad(), cosh(g.input(0))));
}

const OpDef kSinh{.name = "sinh",
                  .backward = sinh_backward,
                  .saves = saves::kInput0,
                  .grad_graph = sinh_grad_graph};
TAPEGRAD_REGISTER_OP(kSinh);

}  // namespace

Tensor sinh(const Tensor& x) {
  return unary_forward_kernel(kSinh, x, vmath::Unary::kSinh);
}

}  // namespace tapegrad
