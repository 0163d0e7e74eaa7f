// tanh: the hyperbolic tangent elementwise, torch.tanh.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void tanh_backward(Tape& tape, const Node& node) {
  // Y = tanh X  =>  dX += dY ⊙ (1 − Y²)   (torch's tanh_backward, from the output)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* y = node.value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const int64_t n = node.shape.numel();
    for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] * (T(1) - y[i] * y[i]);
  });
}

void tanh_grad_graph(GradGraph& g) {
  // Y = tanh X  =>  dX += dY ⊙ (1 − Y²)
  const Tensor y = g.output();
  g.add(0, mul(g.grad(), 1.0 - mul(y, y)));
}

const OpDef kTanh{.name = "tanh",
                  .backward = tanh_backward,
                  .arguments = nullptr,
                  .saves = saves::kOutput,
                  .grad_graph = tanh_grad_graph};
TAPEGRAD_REGISTER_OP(kTanh);

}  // namespace

Tensor tanh(const Tensor& x) {
  Tensor y = x.tape().record(kTanh, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) yv[i] = std::tanh(xv[i]);
  });
  return y;
}

}  // namespace tapegrad
