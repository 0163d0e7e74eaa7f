// log10: elementwise base-10 logarithm, torch.log10 (log10 0 = −inf, of a negative nan).
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

constexpr double kLn10 = 2.3025850929940456;  // torch's formula's constant
void log10_backward(Tape& tape, const Node& node) {
  // Y = log₁₀ X  =>  dX += dY / (X·ln 10)   (torch's order)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* x = tape.input(node, 0).value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const int64_t n = node.shape.numel();
    for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] / (x[i] * static_cast<T>(kLn10));
  });
}

void log10_grad_graph(GradGraph& g) {
  // Y = log₁₀ X  =>  dX += dY / (X·ln 10)
  g.add(0, div(g.grad(), scale(g.input(0), kLn10)));
}

const OpDef kLog10{.name = "log10",
                   .backward = log10_backward,
                   .saves = saves::kInput0,
                   .grad_graph = log10_grad_graph};
TAPEGRAD_REGISTER_OP(kLog10);

}  // namespace

Tensor log10(const Tensor& x) {
  Tensor y = x.tape().record(kLog10, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) {
      const T v = in[i];
      out[i] = std::log10(v);
    }
  });
  return y;
}

}  // namespace tapegrad
