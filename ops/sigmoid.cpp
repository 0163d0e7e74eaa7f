// sigmoid: 1 / (1 + exp(−x)) elementwise, in torch's CPU order of operations.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void sigmoid_backward(Tape& tape, const Node& node) {
  // Y = σ(X)  =>  dX += dY ⊙ (1 − Y) ⊙ Y   (torch's sigmoid_backward, in that order)
  unary_backward_from_output(tape, node, []<class T>(T dy, T y) { return dy * (T(1) - y) * y; });
}

void sigmoid_grad_graph(GradGraph& g) {
  // Y = σ(X)  =>  dX += dY ⊙ (1 − Y) ⊙ Y
  const Tensor y = g.output();
  g.add(0, mul(mul(g.grad(), 1.0 - y), y));
}

const OpDef kSigmoid{.name = "sigmoid",
                     .backward = sigmoid_backward,
                     .arguments = nullptr,
                     .saves = saves::kOutput,
                     .grad_graph = sigmoid_grad_graph};
TAPEGRAD_REGISTER_OP(kSigmoid);

}  // namespace

Tensor sigmoid(const Tensor& x) {
  return unary_forward(kSigmoid, x, []<class T>(T v) { return T(1) / (T(1) + std::exp(-v)); });
}

}  // namespace tapegrad
