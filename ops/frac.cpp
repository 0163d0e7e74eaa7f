// frac: the fractional part x − trunc(x), torch.frac (keeps x's sign; ±inf gives NaN).
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void frac_backward(Tape& tape, const Node& node) {
  // Y = X − trunc X  =>  dX += dY   (trunc's gradient is zero, as in torch)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* dy = node.grad_as<const T>();
    const int64_t n = node.shape.numel();
    for (int64_t i = 0; i < n; ++i) dx[i] += dy[i];
  });
}

void frac_grad_graph(GradGraph& g) {
  // Y = X − trunc X  =>  dX += dY
  g.add(0, g.grad());
}

const OpDef kFrac{.name = "frac", .backward = frac_backward, .grad_graph = frac_grad_graph};
TAPEGRAD_REGISTER_OP(kFrac);

}  // namespace

Tensor frac(const Tensor& x) {
  return unary_forward(kFrac, x, []<class T>(T v) { return v - std::trunc(v); });
}

}  // namespace tapegrad
