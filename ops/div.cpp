// div: elementwise a / b with broadcasting; IEEE division, so b = 0 gives ±inf or nan as in torch.
#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void div_backward(Tape& tape, const Node& node) {
  // Y = A / B  =>  dA += reduce(dY / B), dB += reduce(-dY ⊙ (Y / B))   (Y / B = A/B², as torch)
  dispatch(node.dtype, [&]<class T>() {
    const Node& a = tape.input(node, 0);
    const Node& b = tape.input(node, 1);
    const Shape& out = node.shape;
    const int64_t n = out.numel();
    const T* dy = node.grad_as<const T>();
    const T* bv = b.value_as<const T>();
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      accumulate_reduced(tape.arena(), d, a.shape, out, dy, bv, b.shape,
                         [](const auto& g, const auto& z) { return g / z; });
    }
    if (T* d = tape.input_grad<T>(node, 1).to_add()) {
      // Y (the output, = A/B elementwise) covers out, so the term needs B alone broadcast.
      const T* y = node.value_as<const T>();
      if (b.shape.numel() == n) {
        ArrayMap<T>(d, n) -=
            ConstArrayMap<T>(dy, n) * (ConstArrayMap<T>(y, n) / ConstArrayMap<T>(bv, n));
      } else {
        T* term = tape.arena().allocate_array<T>(n);
        broadcast_apply<false>(term, out, y, out, bv, b.shape,
                               [](const auto& x, const auto& z) { return x / z; });
        ArrayMap<T>(term, n) *= ConstArrayMap<T>(dy, n);
        reduce_broadcast(static_cast<const T*>(term), out, d, b.shape, /*subtract=*/true);
      }
    }
  });
}

void div_grad_graph(GradGraph& g) {
  // Y = A / B  =>  dA += sum_to_size(dY / B), dB += sum_to_size(-dY ⊙ (Y / B))
  const Tensor b = g.input(1);
  const Shape a_shape = g.input(0).shape(), b_shape = b.shape();
  if (g.needs(0)) g.add(0, sum_to_size(div(g.grad(), b), a_shape));
  if (g.needs(1)) g.add(1, sum_to_size(mul(neg(g.grad()), div(g.output(), b)), b_shape));
}

const OpDef kDiv{.name = "div",
                 .backward = div_backward,
                 .saves = saves::kInput1 | saves::kOutput,
                 .grad_graph = div_grad_graph};
TAPEGRAD_REGISTER_OP(kDiv);

}  // namespace

Tensor div(const Tensor& a, const Tensor& b) {
  check_same_dtype("div", a, b);
  const Shape out = broadcast_shape("div", a, "/", b);
  Tensor y = a.tape().record(kDiv, out, a.dtype(), {a, b});
  dispatch(y.dtype(), [&]<class T>() {
    broadcast_apply<false>(output_data<T>(y), out, a.data<T>(), a.shape(), b.data<T>(), b.shape(),
                           [](const auto& x, const auto& z) { return x / z; });
  });
  return y;
}

}  // namespace tapegrad
