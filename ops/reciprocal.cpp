// reciprocal: elementwise 1 / x (torch.reciprocal; torch computes c / x as reciprocal(x) * c).
#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void reciprocal_backward(Tape& tape, const Node& node) {
  // Y = 1 / X  =>  dX += −dY ⊙ (Y ⊙ Y)   (torch's formula, from the output)
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      const auto y = array_of<T>(node);
      ArrayMap<T>(d, x.shape.numel()) += -grad_array_of<T>(node) * (y * y);
    }
  });
}

void reciprocal_grad_graph(GradGraph& g) {
  // Y = 1 / X  =>  dX += -dY ⊙ (Y ⊙ Y)
  const Tensor y = g.output();
  g.add(0, mul(neg(g.grad()), mul(y, y)));
}

const OpDef kReciprocal{
    .name = "reciprocal", .backward = reciprocal_backward, .grad_graph = reciprocal_grad_graph};
TAPEGRAD_REGISTER_OP(kReciprocal);

}  // namespace

Tensor reciprocal(const Tensor& x) {
  Tensor y = x.tape().record(kReciprocal, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(),
           [&]<class T>() { array_of<T>(y.node()) = static_cast<T>(1) / array_of<T>(x.node()); });
  return y;
}

}  // namespace tapegrad
