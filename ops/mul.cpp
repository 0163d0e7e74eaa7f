// mul: elementwise a * b with broadcasting.
#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void mul_backward(Tape& tape, const Node& node) {
  // Y = A ⊙ B  =>  dA += reduce(dY ⊙ B), dB += reduce(dY ⊙ A)
  dispatch(node.dtype, [&]<class T>() {
    const auto times = [](const auto& x, const auto& z) { return x * z; };
    const T* dy = node.grad_as<const T>();
    for (int k = 0; k < 2; ++k) {
      const Node& self = tape.input(node, k);
      const Node& other = tape.input(node, 1 - k);
      if (T* d = tape.input_grad<T>(node, k).to_add()) {
        accumulate_reduced(tape.arena(), d, self.shape, node.shape, dy, other.value_as<const T>(),
                           other.shape, times);
      }
    }
  });
}

void mul_grad_graph(GradGraph& g) {
  // Y = A ⊙ B  =>  dA += sum_to_size(dY ⊙ B), dB += sum_to_size(dY ⊙ A)
  for (int k = 0; k < 2; ++k) {
    const Shape shape = g.input(k).shape();
    if (g.needs(k)) g.add(k, sum_to_size(mul(g.grad(), g.input(1 - k)), shape));
  }
}

const OpDef kMul{.name = "mul",
                 .backward = mul_backward,
                 .saves = saves::kInput0 | saves::kInput1,
                 .grad_graph = mul_grad_graph};
TAPEGRAD_REGISTER_OP(kMul);

}  // namespace

Tensor mul(const Tensor& a, const Tensor& b) {
  check_same_dtype("mul", a, b);
  const Shape out = broadcast_shape("mul", a, "*", b);
  Tensor y = a.tape().record(kMul, out, a.dtype(), {a, b});
  dispatch(y.dtype(), [&]<class T>() {
    broadcast_apply<false>(output_data<T>(y), out, a.data<T>(), a.shape(), b.data<T>(), b.shape(),
                           [](const auto& x, const auto& z) { return x * z; });
  });
  return y;
}

}  // namespace tapegrad
