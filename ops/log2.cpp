// log2: elementwise base-2 logarithm, torch.log2 (log2 0 = −inf, of a negative nan).
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

constexpr double kLn2 = 0.6931471805599453;  // torch's formula's constant
void log2_backward(Tape& tape, const Node& node) {
  // Y = log₂ X  =>  dX += dY / (X·ln 2)   (torch's order)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* x = tape.input(node, 0).value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const int64_t n = node.shape.numel();
    for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] / (x[i] * static_cast<T>(kLn2));
  });
}

void log2_grad_graph(GradGraph& g) {
  // Y = log₂ X  =>  dX += dY / (X·ln 2)
  g.add(0, div(g.grad(), scale(g.input(0), kLn2)));
}

const OpDef kLog2{.name = "log2",
                  .backward = log2_backward,
                  .saves = saves::kInput0,
                  .grad_graph = log2_grad_graph};
TAPEGRAD_REGISTER_OP(kLog2);

}  // namespace

Tensor log2(const Tensor& x) {
  Tensor y = x.tape().record(kLog2, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) {
      const T v = in[i];
      out[i] = std::log2(v);
    }
  });
  return y;
}

}  // namespace tapegrad
