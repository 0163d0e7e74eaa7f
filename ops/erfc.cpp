// erfc: elementwise complementary error function 1 − erf(x), torch.erfc (exact where erf is near
// 1).
#include <cmath>
#include <numbers>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void erfc_backward(Tape& tape, const Node& node) {
  // Y = erfc X  =>  dX += (−2/√π)·e^(−X²) ⊙ dY   (torch's order; 2/√π as torch's 2.0 / sqrt(M_PI))
  unary_backward_kernel(
      tape, node, false, [](auto x) { return -(x * x); }, vmath::Unary::kExp,
      []<class T>(T dy, T e) {
        return static_cast<T>(-2.0 / std::sqrt(std::numbers::pi)) * e * dy;
      });
}

void erfc_grad_graph(GradGraph& g) {
  // Y = erfc X  =>  dX += (−2/√π)·e^(−X²) ⊙ dY
  const Tensor x = g.input(0);
  g.add(0, mul(scale(exp(neg(mul(x, x))), -2.0 / std::sqrt(std::numbers::pi)), g.grad()));
}

const OpDef kErfc{.name = "erfc",
                  .backward = erfc_backward,
                  .saves = saves::kInput0,
                  .grad_graph = erfc_grad_graph};
TAPEGRAD_REGISTER_OP(kErfc);

}  // namespace

Tensor erfc(const Tensor& x) {
  return unary_forward_kernel(kErfc, x, vmath::Unary::kErfc);
}

}  // namespace tapegrad
