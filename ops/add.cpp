// add: elementwise a + b (same shape; broadcasting comes with the elementwise family).
#include "ops/op_util.h"
#include "ops/ops.h"

namespace tapegrad {

namespace {

void add_backward(Tape& tape, const Node& node) {
  // Y = A + B  =>  dA += dY, dB += dY
  dispatch(node.dtype, [&]<class T>() {
    const auto dy = grad_array_of<T>(node);
    for (int k = 0; k < 2; ++k) {
      if (T* d = tape.grad_for<T>(node, k, node.shape)) ArrayMap<T>(d, dy.size()) += dy;
    }
  });
}

const OpDef kAdd{"add", add_backward};

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  check_same_dtype("add", a, b);
  if (a.shape() != b.shape()) throw_binary_error("add", a, "+", b, "shapes differ");
  Tensor y = a.tape().record(kAdd, a.shape(), a.dtype(), {a, b});
  dispatch(y.dtype(), [&]<class T>() {
    array_of<T>(y.node()) = array_of<T>(a.node()) + array_of<T>(b.node());
  });
  return y;
}

}  // namespace tapegrad
