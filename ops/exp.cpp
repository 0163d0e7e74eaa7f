// exp: elementwise eˣ.
#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void exp_backward(Tape& tape, const Node& node) {
  // Y = eˣ  =>  dX += dY ⊙ Y   (reads the output, nothing saved)
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      ArrayMap<T>(d, x.shape.numel()) += grad_array_of<T>(node) * array_of<T>(node);
    }
  });
}

void exp_grad_graph(GradGraph& g) {
  // Y = eˣ  =>  dX += dY ⊙ Y
  g.add(0, mul(g.grad(), g.output()));
}

const OpDef kExp{
    .name = "exp", .backward = exp_backward, .saves = saves::kOutput, .grad_graph = exp_grad_graph};
TAPEGRAD_REGISTER_OP(kExp);

}  // namespace

Tensor exp(const Tensor& x) {
  Tensor y = x.tape().record(kExp, x.shape(), x.dtype(), {x});
  // SLEEF's 1-ulp exp, the function torch's exp kernel calls (vmath.h).
  dispatch(y.dtype(), [&]<class T>() { vmath::exp(x.data<T>(), output_data<T>(y), x.numel()); });
  return y;
}

}  // namespace tapegrad
