// sub: elementwise a - b with broadcasting.
#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void sub_backward(Tape& tape, const Node& node) {
  // Y = A - B  =>  dA += reduce(dY), dB += reduce(-dY)
  dispatch(node.dtype, [&]<class T>() {
    for (int k = 0; k < 2; ++k) {
      const Shape& shape = tape.input(node, k).shape;
      if (T* d = tape.input_grad<T>(node, k).to_add()) {
        reduce_broadcast(node.grad_as<const T>(), node.shape, d, shape, /*subtract=*/k == 1);
      }
    }
  });
}

void sub_grad_graph(GradGraph& g) {
  // Y = A - B  =>  dA += sum_to_size(dY), dB += sum_to_size(-dY)
  const Shape a = g.input(0).shape(), b = g.input(1).shape();
  if (g.needs(0)) g.add(0, sum_to_size(g.grad(), a));
  if (g.needs(1)) g.add(1, sum_to_size(neg(g.grad()), b));
}

const OpDef kSub{.name = "sub", .backward = sub_backward, .grad_graph = sub_grad_graph};
TAPEGRAD_REGISTER_OP(kSub);

}  // namespace

Tensor sub(const Tensor& a, const Tensor& b) {
  check_same_dtype("sub", a, b);
  const Shape out = broadcast_shape("sub", a, "-", b);
  Tensor y = a.tape().record(kSub, out, a.dtype(), {a, b});
  dispatch(y.dtype(), [&]<class T>() {
    broadcast_apply<false>(output_data<T>(y), out, a.data<T>(), a.shape(), b.data<T>(), b.shape(),
                           [](const auto& x, const auto& z) { return x - z; });
  });
  return y;
}

}  // namespace tapegrad
