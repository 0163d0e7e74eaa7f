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
  // √x by the vector kernel (correctly rounded, as std::sqrt), then the division in place.
  Tensor y = unary_forward_kernel(kRsqrt, x, vmath::Unary::kSqrt);
  dispatch(y.dtype(), [&]<class T>() {
    T* p = output_data<T>(y);
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) p[i] = T(1) / p[i];
  });
  return y;
}

}  // namespace tapegrad
