// square: elementwise x², torch.square (torch computes it as pow(x, 2)).
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void square_backward(Tape& tape, const Node& node) {
  // Y = X²  =>  dX += dY ⊙ (2·X)   (pow's backward for p = 2, as torch's)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* x = tape.input(node, 0).value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const int64_t n = node.shape.numel();
    for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] * (T(2) * x[i]);
  });
}

void square_grad_graph(GradGraph& g) {
  // Y = X²  =>  dX += dY ⊙ (2·X)
  g.add(0, mul(g.grad(), scale(g.input(0), 2.0)));
}

const OpDef kSquare{.name = "square",
                    .backward = square_backward,
                    .saves = saves::kInput0,
                    .grad_graph = square_grad_graph};
TAPEGRAD_REGISTER_OP(kSquare);

}  // namespace

Tensor square(const Tensor& x) {
  Tensor y = x.tape().record(kSquare, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) {
      const T v = in[i];
      out[i] = v * v;
    }
  });
  return y;
}

}  // namespace tapegrad
