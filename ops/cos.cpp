// cos: elementwise cosine, torch.cos.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void cos_backward(Tape& tape, const Node& node) {
  // Y = cos X  =>  dX += dY ⊙ (−sin X)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* x = tape.input(node, 0).value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const int64_t n = node.shape.numel();
    for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] * -std::sin(x[i]);
  });
}

void cos_grad_graph(GradGraph& g) {
  // Y = cos X  =>  dX += dY ⊙ (−sin X)
  g.add(0, mul(g.grad(), neg(sin(g.input(0)))));
}

const OpDef kCos{
    .name = "cos", .backward = cos_backward, .saves = saves::kInput0, .grad_graph = cos_grad_graph};
TAPEGRAD_REGISTER_OP(kCos);

}  // namespace

Tensor cos(const Tensor& x) {
  Tensor y = x.tape().record(kCos, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) {
      const T v = in[i];
      out[i] = std::cos(v);
    }
  });
  return y;
}

}  // namespace tapegrad
