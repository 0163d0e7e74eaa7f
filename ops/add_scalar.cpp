// add_scalar: x plus a constant (also x - c, as x + (-c), which is the same in IEEE arithmetic).
#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct AddScalarState {
  double c;
};

void add_scalar_backward(Tape& tape, const Node& node) {
  // Y = X + c  =>  dX += dY
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      ArrayMap<T>(d, x.shape.numel()) += grad_array_of<T>(node);
    }
  });
}

void add_scalar_grad_graph(GradGraph& g) {
  // Y = X + c  =>  dX += dY
  g.add(0, g.grad());
}

const OpDef kAddScalar{
    .name = "add_scalar",
    .backward = add_scalar_backward,
    .arguments = [](const Tape&,
                    const Node& n) { return "+ " + number_text(n.state_as<AddScalarState>().c); },
    .grad_graph = add_scalar_grad_graph};
TAPEGRAD_REGISTER_OP(kAddScalar);

}  // namespace

Tensor add_scalar(const Tensor& x, double c) {
  Tensor y = x.tape().record(kAddScalar, x.shape(), x.dtype(), {x}, AddScalarState{c});
  dispatch(y.dtype(), [&]<class T>() {
    // The constant is rounded to the tensor's dtype first, as torch does with a Python number.
    array_of<T>(y.node()) = array_of<T>(x.node()) + static_cast<T>(c);
  });
  return y;
}

}  // namespace tapegrad
