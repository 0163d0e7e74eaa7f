// gelu: the tanh approximation of GELU used by the book's GPT (torch's approximate='tanh').
#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// Rough flops per element of the forward or backward (a tanh and a dozen multiply-adds), for
// parallel_for's decision to split.
constexpr double kGeluCost = 40.0;

void gelu_backward(Tape& tape, const Node& node) {
  // Y = ½X(1 + tanh u), u = β(X + κX³)  =>  dX += dY·(½(1 + tanh u) + ½X(1 − tanh² u)·β(1 + 3κX²))
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    // SLEEF's tanh in torch's order of operations (vmath.h), as torch's GeluBackward kernel;
    // elementwise, so split over the threads with the same result.
    const T *xv = x.value_as<T>(), *dy = node.grad_as<T>();
    parallel_for(x.shape.numel(), kGeluCost, [&](int, int64_t begin, int64_t end) {
      vmath::gelu_tanh_backward(xv + begin, dy + begin, dx + begin, end - begin);
    });
  });
}

void gelu_grad_graph(GradGraph& g) {
  // Y = ½X(1 + tanh u), u = β(X + κX³)  =>  dX += dY·(½(1 + tanh u) + ½X(1 − tanh² u)·β(1 + 3κX²))
  const Tensor x = g.input(0);
  const Tensor x2 = mul(x, x);
  const Tensor t = tanh(scale(x + scale(mul(x2, x), vmath::kGeluKappa), vmath::kGeluBeta));
  const Tensor slope = scale(scale(x2, 3.0 * vmath::kGeluKappa) + 1.0, vmath::kGeluBeta);
  g.add(0, mul(g.grad(), scale(t + 1.0, 0.5) + mul(scale(x, 0.5), mul(1.0 - mul(t, t), slope))));
}

const OpDef kGelu{.name = "gelu",
                  .backward = gelu_backward,
                  .saves = saves::kInput0,
                  .grad_graph = gelu_grad_graph};
TAPEGRAD_REGISTER_OP(kGelu);

}  // namespace

Tensor gelu(const Tensor& x) {
  Tensor y = x.tape().record(kGelu, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    // SLEEF's vectorised tanh, as torch's approximate='tanh' kernel (vmath.h); every element
    // goes through the same vector function wherever a part starts, so the split over the
    // threads leaves the result unchanged.
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    parallel_for(x.numel(), kGeluCost, [&](int, int64_t begin, int64_t end) {
      vmath::gelu_tanh(xv + begin, yv + begin, end - begin);
    });
  });
  return y;
}

}  // namespace tapegrad
