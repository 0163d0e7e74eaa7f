// gelu: the tanh approximation of GELU used by the book's GPT (torch's approximate='tanh').
#include "ops/detail/op_util.h"
#include "ops/detail/vmath.h"
#include "ops/ops.h"

namespace tapegrad {

namespace {

void gelu_backward(Tape& tape, const Node& node) {
  // Y = ½X(1 + tanh u), u = β(X + κX³)  =>  dX += dY·(½(1 + tanh u) + ½X(1 − tanh² u)·β(1 + 3κX²))
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    T* dx = tape.grad_for<T>(node, 0);
    if (dx == nullptr) return;
    // SLEEF's tanh in torch's order of operations (vmath.h), as torch's GeluBackward kernel.
    vmath::gelu_tanh_backward(x.value_as<T>(), node.grad_as<T>(), dx, x.shape.numel());
  });
}

const OpDef kGelu{.name = "gelu", .backward = gelu_backward, .saves = saves::kInput0};
TAPEGRAD_REGISTER_OP(kGelu);

}  // namespace

Tensor gelu(const Tensor& x) {
  Tensor y = x.tape().record(kGelu, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    // SLEEF's vectorised tanh, as torch's approximate='tanh' kernel (vmath.h).
    vmath::gelu_tanh(value_of<T>(x), value_of<T>(y), x.numel());
  });
  return y;
}

}  // namespace tapegrad
