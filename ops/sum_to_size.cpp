// sum_to_size: x summed over the dims along which `shape` broadcasts to it (torch's
// Tensor.sum_to_size): how a broadcast's gradient returns to its operand.
#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void sum_to_size_backward(Tape& tape, const Node& node) {
  // Y = reduce(X) to shape  =>  dX += dY broadcast to shape(X)
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      const T* dy = node.grad_as<const T>();
      broadcast_apply<true>(d, x.shape, dy, node.shape, dy, node.shape,
                            [](const auto& a, const auto&) { return a; });
    }
  });
}

void sum_to_size_grad_graph(GradGraph& g) {
  // Y = reduce(X) to shape  =>  dX += expand(dY, shape(X))
  const Shape shape = g.input(0).shape();
  g.add(0, expand(g.grad(), shape));
}

const OpDef kSumToSize{.name = "sum_to_size",
                       .backward = sum_to_size_backward,
                       .arguments = [](const Tape&, const Node& n) { return n.shape.str(); },
                       .grad_graph = sum_to_size_grad_graph};
TAPEGRAD_REGISTER_OP(kSumToSize);

}  // namespace

Tensor sum_to_size(const Tensor& x, Shape shape) {
  bool ok = false;
  const Shape joint = broadcast_shape(shape, x.shape(), &ok);
  if (!ok || joint != x.shape()) {
    throw_unary_error("sum_to_size", x, "size " + shape.str() + " is not expandable to it");
  }
  if (shape == x.shape()) return x;  // torch returns x itself
  Tensor y = x.tape().record(kSumToSize, shape, x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    T* out = output_data<T>(y);
    std::fill_n(out, shape.numel(), T(0));
    if (x.numel() > 0) reduce_broadcast(x.data<T>(), x.shape(), out, shape);
  });
  return y;
}

}  // namespace tapegrad
