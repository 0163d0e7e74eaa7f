// silu: x·σ(x) elementwise, computed as torch's CPU kernel does, x / (1 + exp(−x)).
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void silu_backward(Tape& tape, const Node& node) {
  // Y = X·σ(X)  =>  dX += dY ⊙ σ(X) ⊙ (1 + X ⊙ (1 − σ(X)))   (torch's silu_backward)
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* xv = x.value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const int64_t n = node.shape.numel();
    for (int64_t i = 0; i < n; ++i) {
      const T s = T(1) / (T(1) + std::exp(-xv[i]));
      dx[i] += dy[i] * s * (T(1) + xv[i] * (T(1) - s));
    }
  });
}

void silu_grad_graph(GradGraph& g) {
  // Y = X·σ(X)  =>  dX += dY ⊙ σ(X) ⊙ (1 + X ⊙ (1 − σ(X)))
  const Tensor x = g.input(0), s = sigmoid(x);
  g.add(0, mul(mul(g.grad(), s), 1.0 + mul(x, 1.0 - s)));
}

const OpDef kSilu{.name = "silu",
                  .backward = silu_backward,
                  .arguments = nullptr,
                  .saves = saves::kInput0,
                  .grad_graph = silu_grad_graph};
TAPEGRAD_REGISTER_OP(kSilu);

}  // namespace

Tensor silu(const Tensor& x) {
  Tensor y = x.tape().record(kSilu, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) yv[i] = xv[i] / (T(1) + std::exp(-xv[i]));
  });
  return y;
}

}  // namespace tapegrad
