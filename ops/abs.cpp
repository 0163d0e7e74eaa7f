// abs: elementwise |x|, torch.abs; its gradient at 0 is 0 (torch's dY ⊙ sgn(X)).
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void abs_backward(Tape& tape, const Node& node) {
  // Y = |X|  =>  dX += dY ⊙ sgn(X)   (sgn(0) = sgn(nan) = 0, ops/sign.cpp)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* x = tape.input(node, 0).value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const int64_t n = node.shape.numel();
    for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] * (T(T(0) < x[i]) - T(x[i] < T(0)));
  });
}

void abs_grad_graph(GradGraph& g) {
  // Y = |X|  =>  dX += dY ⊙ sgn(X)   (sign's own gradient is zero: abs'' = 0)
  g.add(0, mul(g.grad(), sign(g.input(0))));
}

const OpDef kAbs{
    .name = "abs", .backward = abs_backward, .saves = saves::kInput0, .grad_graph = abs_grad_graph};
TAPEGRAD_REGISTER_OP(kAbs);

}  // namespace

Tensor abs(const Tensor& x) {
  Tensor y = x.tape().record(kAbs, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) out[i] = std::abs(in[i]);
  });
  return y;
}

}  // namespace tapegrad
