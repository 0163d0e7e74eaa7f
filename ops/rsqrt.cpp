// rsqrt: elementwise 1 / √x, torch.rsqrt (rsqrt 0 = inf, of a negative nan).
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void rsqrt_backward(Tape& tape, const Node& node) {
  // Y = X^(−½)  =>  dX += (−½·dY) ⊙ Y³   (torch's order, Y³ as (Y·Y)·Y; reads the output)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* y = node.value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const int64_t n = node.shape.numel();
    for (int64_t i = 0; i < n; ++i) dx[i] += (T(-0.5) * dy[i]) * (y[i] * y[i] * y[i]);
  });
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
  Tensor y = x.tape().record(kRsqrt, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) {
      const T v = in[i];
      out[i] = T(1) / std::sqrt(v);
    }
  });
  return y;
}

}  // namespace tapegrad
