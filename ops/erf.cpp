// erf: elementwise error function, torch.erf.
#include <cmath>
#include <numbers>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void erf_backward(Tape& tape, const Node& node) {
  // Y = erf X  =>  dX += (2/√π)·e^(−X²) ⊙ dY   (torch's order; 2/√π as torch's 2.0 / sqrt(M_PI))
  unary_backward_kernel(
      tape, node, false, [](auto x) { return -(x * x); }, vmath::Unary::kExp,
      []<class T>(T dy, T e) {
        return static_cast<T>(2.0 / std::sqrt(std::numbers::pi)) * e * dy;
      });
}

void erf_grad_graph(GradGraph& g) {
  // Y = erf X  =>  dX += (2/√π)·e^(−X²) ⊙ dY
  const Tensor x = g.input(0);
  g.add(0, mul(scale(exp(neg(mul(x, x))), 2.0 / std::sqrt(std::numbers::pi)), g.grad()));
}

const OpDef kErf{
    .name = "erf", .backward = erf_backward, .saves = saves::kInput0, .grad_graph = erf_grad_graph};
TAPEGRAD_REGISTER_OP(kErf);

}  // namespace

Tensor erf(const Tensor& x) {
  return unary_forward_kernel(kErf, x, vmath::Unary::kErf);
}

}  // namespace tapegrad
