// add: elementwise a + b with broadcasting.
#include <algorithm>

#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void add_backward(Tape& tape, const Node& node) {
  // Y = A + B  =>  dA += reduce(dY), dB += reduce(dY)
  dispatch(node.dtype, [&]<class T>() {
    const T* dy = node.grad_as<const T>();
    for (int k = 0; k < 2; ++k) {
      const Shape& shape = tape.input(node, k).shape;
      if (shape != node.shape) {  // broadcast: dY summed over the broadcast dims
        if (T* d = tape.input_grad<T>(node, k).to_add()) reduce_broadcast(dy, node.shape, d, shape);
        continue;
      }
      const auto [d, overwrite, numel] = tape.input_grad<T>(node, k);  // written when still zero
      if (d != nullptr && overwrite) {
        std::copy_n(dy, numel, d);
      } else if (d != nullptr) {
        reduce_broadcast(dy, node.shape, d, shape);
      }
    }
  });
}

void add_grad_graph(GradGraph& g) {
  // Y = A + B  =>  dA += sum_to_size(dY), dB += sum_to_size(dY)
  for (int k = 0; k < 2; ++k) {
    const Shape shape = g.input(k).shape();
    if (g.needs(k)) g.add(k, sum_to_size(g.grad(), shape));
  }
}

const OpDef kAdd{.name = "add", .backward = add_backward, .grad_graph = add_grad_graph};
TAPEGRAD_REGISTER_OP(kAdd);

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  check_same_dtype("add", a, b);
  const Shape out = broadcast_shape("add", a, "+", b);
  Tensor y = a.tape().record(kAdd, out, a.dtype(), {a, b});
  dispatch(y.dtype(), [&]<class T>() {
    broadcast_apply<false>(output_data<T>(y), out, a.data<T>(), a.shape(), b.data<T>(), b.shape(),
                           [](const auto& x, const auto& z) { return x + z; });
  });
  return y;
}

}  // namespace tapegrad
