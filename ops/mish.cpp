// mish: x·tanh(softplus(x)), torch.nn.functional.mish in torch's CPU order of operations,
// x·tanh(log1p(exp(x))) (no threshold: exp overflows to inf and tanh gives 1).
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void mish_backward(Tape& tape, const Node& node) {
  // Y = X·t, t = tanh(log1p(eˣ))  =>  dX += dY·(t + X·σ(X)·(1 − t²))   (torch's mish_backward)
  unary_backward_from_input(tape, node, []<class T>(T dy, T x) {
    const T sigmoid = T(1) / (T(1) + std::exp(-x));
    const T t = std::tanh(std::log1p(std::exp(x)));
    return dy * (t + x * sigmoid * (T(1) - t * t));
  });
}

void mish_grad_graph(GradGraph& g) {
  // Y = X·t, t = tanh(log1p(eˣ))  =>  dX += dY·(t + X·σ(X)·(1 − t²))
  const Tensor x = g.input(0);
  const Tensor t = tanh(log1p(exp(x)));
  g.add(0, mul(g.grad(), t + mul(mul(x, sigmoid(x)), 1.0 - mul(t, t))));
}

const OpDef kMish{.name = "mish",
                  .backward = mish_backward,
                  .arguments = nullptr,
                  .saves = saves::kInput0,
                  .grad_graph = mish_grad_graph};
TAPEGRAD_REGISTER_OP(kMish);

}  // namespace

Tensor mish(const Tensor& x) {
  return unary_forward(kMish, x,
                       []<class T>(T v) { return v * std::tanh(std::log1p(std::exp(v))); });
}

}  // namespace tapegrad
