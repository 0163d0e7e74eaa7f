// sin: elementwise sine, torch.sin.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void sin_backward(Tape& tape, const Node& node) {
  // Y = sin X  =>  dX += dY ⊙ cos X
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* x = tape.input(node, 0).value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const int64_t n = node.shape.numel();
    for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] * std::cos(x[i]);
  });
}

void sin_grad_graph(GradGraph& g) {
  // Y = sin X  =>  dX += dY ⊙ cos X
  g.add(0, mul(g.grad(), cos(g.input(0))));
}

const OpDef kSin{
    .name = "sin", .backward = sin_backward, .saves = saves::kInput0, .grad_graph = sin_grad_graph};
TAPEGRAD_REGISTER_OP(kSin);

}  // namespace

Tensor sin(const Tensor& x) {
  Tensor y = x.tape().record(kSin, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) {
      const T v = in[i];
      out[i] = std::sin(v);
    }
  });
  return y;
}

}  // namespace tapegrad
