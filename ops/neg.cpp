// neg: elementwise -x.
#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void neg_backward(Tape& tape, const Node& node) {
  // Y = -X  =>  dX += -dY
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      ArrayMap<T>(d, x.shape.numel()) -= grad_array_of<T>(node);
    }
  });
}

void neg_grad_graph(GradGraph& g) {
  // Y = -X  =>  dX += -dY
  g.add(0, neg(g.grad()));
}

const OpDef kNeg{.name = "neg", .backward = neg_backward, .grad_graph = neg_grad_graph};
TAPEGRAD_REGISTER_OP(kNeg);

}  // namespace

Tensor neg(const Tensor& x) {
  Tensor y = x.tape().record(kNeg, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() { array_of<T>(y.node()) = -array_of<T>(x.node()); });
  return y;
}

}  // namespace tapegrad
