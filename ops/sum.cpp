// sum: the sum of all elements (a scalar).
#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void sum_backward(Tape& tape, const Node& node) {
  // y = Σ x  =>  dX += dy (broadcast)
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    const InputGrad<T> g = tape.input_grad<T>(node, 0);
    if (g.data == nullptr) return;
    const T dy = node.grad_as<T>()[0];
    if (g.overwrite) {
      // 0 + dy, the bits adding into zeros gives, in one pass.
      ArrayMap<T>(g.data, x.shape.numel()).setConstant(T(0) + dy);
    } else {
      ArrayMap<T>(g.data, x.shape.numel()) += dy;
    }
  });
}

void sum_grad_graph(GradGraph& g) {
  // Y = Σ X  =>  dX += dY broadcast to shape(X)
  const Shape shape = g.input(0).shape();
  g.add(0, expand(g.grad(), shape));
}

const OpDef kSum{.name = "sum", .backward = sum_backward, .grad_graph = sum_grad_graph};
TAPEGRAD_REGISTER_OP(kSum);

}  // namespace

Tensor sum(const Tensor& x) {
  Tensor y = x.tape().record(kSum, Shape{}, x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    output_data<T>(y)[0] = vmath::sum(x.data<T>(), x.numel());  // torch's order
  });
  return y;
}

}  // namespace tapegrad
