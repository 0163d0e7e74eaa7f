// log2: elementwise base-2 logarithm, torch.log2 (log2 0 = −inf, of a negative nan).
#include <cmath>
#include <numbers>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void log2_backward(Tape& tape, const Node& node) {
  // Y = log₂ X  =>  dX += dY / (X·ln 2)   (torch's order)
  unary_backward_from_input(
      tape, node, []<class T>(T dy, T x) { return dy / (x * static_cast<T>(std::numbers::ln2)); });
}

void log2_grad_graph(GradGraph& g) {
  // Y = log₂ X  =>  dX += dY / (X·ln 2)
  g.add(0, div(g.grad(), scale(g.input(0), std::numbers::ln2)));
}

const OpDef kLog2{.name = "log2",
                  .backward = log2_backward,
                  .saves = saves::kInput0,
                  .grad_graph = log2_grad_graph};
TAPEGRAD_REGISTER_OP(kLog2);

}  // namespace

Tensor log2(const Tensor& x) {
  return unary_forward_kernel(kLog2, x, vmath::Unary::kLog2);
}

}  // namespace tapegrad
