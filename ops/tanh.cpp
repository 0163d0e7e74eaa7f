// tanh: the hyperbolic tangent elementwise, torch.tanh.
#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void tanh_backward(Tape& tape, const Node& node) {
  // Y = tanh X  =>  dX += dY ⊙ (1 − Y²)   (torch's tanh_backward, from the output)
  unary_backward_from_output(tape, node, []<class T>(T dy, T y) { return dy * (T(1) - y * y); });
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
  // SLEEF's 1-ulp tanh, the function torch's tanh kernel calls (vmath.h).
  dispatch(y.dtype(), [&]<class T>() { vmath::tanh(x.data<T>(), output_data<T>(y), x.numel()); });
  return y;
}

}  // namespace tapegrad
