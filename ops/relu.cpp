// relu: max(x, 0) elementwise, torch.relu (NaN stays NaN).
#include <cmath>

#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void relu_backward(Tape& tape, const Node& node) {
  // Y = max(X, 0)  =>  dX += dY ⊙ [Y > 0]   (torch's threshold_backward on the output)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* y = node.value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const int64_t n = node.shape.numel();
    for (int64_t i = 0; i < n; ++i) dx[i] += y[i] > T(0) ? dy[i] : T(0);
  });
}

void relu_grad_graph(GradGraph& g) {
  // Y = max(X, 0)  =>  dX += dY ⊙ [Y > 0]   (the mask is a constant: relu'' = 0)
  const Tensor y = g.output();
  g.add(0, mul(g.grad(), indicator(y, [](double v) { return v > 0; })));
}

const OpDef kRelu{.name = "relu",
                  .backward = relu_backward,
                  .arguments = nullptr,
                  .saves = saves::kOutput,
                  .grad_graph = relu_grad_graph};
TAPEGRAD_REGISTER_OP(kRelu);

}  // namespace

Tensor relu(const Tensor& x) {
  Tensor y = x.tape().record(kRelu, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) yv[i] = (xv[i] > T(0) || std::isnan(xv[i])) ? xv[i] : T(0);
  });
  return y;
}

}  // namespace tapegrad
