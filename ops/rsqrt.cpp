// rsqrt: elementwise 1 / √x, torch.rsqrt (rsqrt 0 = inf, of a negative nan).
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void rsqrt_backward(Tape& tape, const Node& node) {
  // Y = X^(−½)  =>  dX += (−½·dY) ⊙ Y³   (torch's order, Y³ as (Y·Y)·Y; reads the output)
  unary_backward_from_output(tape, node,
                             []<class T>(T dy, T y) { return (T(-0.5) * dy) * (y * y * y); });
}

void rsqrt_grad_graph(GradGraph& g) {
  // Y = X^(−½)  =>  dX += (−½·dY) ⊙ Y³
  g.add(0, mul(scale(g.grad(), -0.5), pow(g.output(), 3.0)));
}

const OpDef kRsqrt{.name = "rsqrt",
                   .backward = rsqrt_backward,
                   .saves = saves::kOutput,
                   .grad_graph = rsqrt_grad_graph};
TAPEGRAD_REGISTER_OP(kRsqrt);

}  // namespace

Tensor rsqrt(const Tensor& x) {
  return unary_forward(kRsqrt, x, []<class T>(T v) { return T(1) / std::sqrt(v); });
}

}  // namespace tapegrad
