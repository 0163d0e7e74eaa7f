// frac: the fractional part x − trunc(x), torch.frac (keeps x's sign; ±inf gives NaN).
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void frac_backward(Tape& tape, const Node& node) {
  // Y = X − trunc X  =>  dX += dY   (trunc's gradient is zero, as in torch)
  unary_backward_from_input(tape, node, []<class T>(T dy, T) { return dy; });
}

void frac_grad_graph(GradGraph& g) {
  // Y = X − trunc X  =>  dX += dY
  g.add(0, g.grad());
}

const OpDef kFrac{.name = "frac", .backward = frac_backward, .grad_graph = frac_grad_graph};
TAPEGRAD_REGISTER_OP(kFrac);

}  // namespace

Tensor frac(const Tensor& x) {
  return unary_forward_kernel(kFrac, x, vmath::Unary::kFrac);
}

}  // namespace tapegrad
