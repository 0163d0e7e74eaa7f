// log10: elementwise base-10 logarithm, torch.log10 (log10 0 = −inf, of a negative nan).
#include <cmath>
#include <numbers>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void log10_backward(Tape& tape, const Node& node) {
  // Y = log₁₀ X  =>  dX += dY / (X·ln 10)   (torch's order)
  unary_backward_from_input(
      tape, node, []<class T>(T dy, T x) { return dy / (x * static_cast<T>(std::numbers::ln10)); });
}

void log10_grad_graph(GradGraph& g) {
  // Y = log₁₀ X  =>  dX += dY / (X·ln 10)
  g.add(0, div(g.grad(), scale(g.input(0), std::numbers::ln10)));
}

const OpDef kLog10{.name = "log10",
                   .backward = log10_backward,
                   .saves = saves::kInput0,
                   .grad_graph = log10_grad_graph};
TAPEGRAD_REGISTER_OP(kLog10);

}  // namespace

Tensor log10(const Tensor& x) {
  return unary_forward_kernel(kLog10, x, vmath::Unary::kLog10);
}

}  // namespace tapegrad
