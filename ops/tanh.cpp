// tanh: the hyperbolic tangent elementwise, torch.tanh.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
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

const OpDef kTanh{"tanh", tanh_backward, nullptr, saves::kOutput};
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
