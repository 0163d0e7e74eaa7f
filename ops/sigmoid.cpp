// sigmoid: 1 / (1 + exp(−x)) elementwise, in torch's CPU order of operations.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void sigmoid_backward(Tape& tape, const Node& node) {
  // Y = σ(X)  =>  dX += dY ⊙ (1 − Y) ⊙ Y   (torch's sigmoid_backward, in that order)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* y = node.value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const int64_t n = node.shape.numel();
    for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] * (T(1) - y[i]) * y[i];
  });
}

void sigmoid_grad_graph(GradGraph& g) {
  // Y = σ(X)  =>  dX += dY ⊙ (1 − Y) ⊙ Y
  const Tensor y = g.output();
  g.add(0, mul(mul(g.grad(), 1.0 - y), y));
}

const OpDef kSigmoid{.name = "sigmoid",
                     .backward = sigmoid_backward,
                     .arguments = nullptr,
                     .saves = saves::kOutput,
                     .grad_graph = sigmoid_grad_graph};
TAPEGRAD_REGISTER_OP(kSigmoid);

}  // namespace

Tensor sigmoid(const Tensor& x) {
  Tensor y = x.tape().record(kSigmoid, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) yv[i] = T(1) / (T(1) + std::exp(-xv[i]));
  });
  return y;
}

}  // namespace tapegrad
