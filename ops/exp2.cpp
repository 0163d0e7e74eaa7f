// exp2: elementwise 2ˣ, torch.exp2.
#include <cmath>
#include <numbers>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void exp2_backward(Tape& tape, const Node& node) {
  // Y = 2ˣ  =>  dX += (dY ⊙ Y)·ln 2   (torch's order; reads the output)
  unary_backward_from_output(
      tape, node, []<class T>(T dy, T y) { return dy * y * static_cast<T>(std::numbers::ln2); });
}

void exp2_grad_graph(GradGraph& g) {
  // Y = 2ˣ  =>  dX += (dY ⊙ Y)·ln 2
  g.add(0, scale(mul(g.grad(), g.output()), std::numbers::ln2));
}

const OpDef kExp2{.name = "exp2",
                  .backward = exp2_backward,
                  .saves = saves::kOutput,
                  .grad_graph = exp2_grad_graph};
TAPEGRAD_REGISTER_OP(kExp2);

}  // namespace

Tensor exp2(const Tensor& x) {
  return unary_forward_kernel(kExp2, x, vmath::Unary::kExp2);
}

}  // namespace tapegrad
