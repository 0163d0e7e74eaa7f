// cosh: elementwise hyperbolic cosine, torch.cosh.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void cosh_backward(Tape& tape, const Node& node) {
  // Y = cosh X  =>  dX += dY ⊙ sinh X
  unary_backward_kernel(
      tape, node, false, [](auto x) { return x; }, vmath::Unary::kSinh,
      []<class T>(T dy, T sinh_x) { return dy * sinh_x; });
}

void cosh_grad_graph(GradGraph& g) {
  // Y = cosh X  =>  dX += dY ⊙ sinh X
  g.add(0, mul(g.grad(), sinh(g.input(0))));
}

const OpDef kCosh{.name = "cosh",
                  .backward = cosh_backward,
                  .saves = saves::kInput0,
                  .grad_graph = cosh_grad_graph};
TAPEGRAD_REGISTER_OP(kCosh);

}  // namespace

Tensor cosh(const Tensor& x) {
  return unary_forward_kernel(kCosh, x, vmath::Unary::kCosh);
}

}  // namespace tapegrad
