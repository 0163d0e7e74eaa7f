// relu: max(x, 0) elementwise, torch.relu (NaN stays NaN).
#include <cmath>

#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void relu_backward(Tape& tape, const Node& node) {
  // Y = max(X, 0)  =>  dX += dY ⊙ [Y > 0]   (torch's threshold_backward on the output)
  unary_backward_from_output(tape, node, []<class T>(T dy, T y) { return y > T(0) ? dy : T(0); });
}

void relu_grad_graph(GradGraph& g) {
  // Y = max(X, 0)  =>  dX += dY ⊙ [Y > 0]   (the mask is a constant: relu'' = 0)
  const Tensor y = g.output();
  g.add(0, mul(g.grad(), indicator(y, [](double v) { return v > 0; })));
}

const OpDef kRelu{.name = "relu",
                  .backward = relu_backward,
                  .arguments = nullptr,
                  .saves = saves::kOutput,
                  .grad_graph = relu_grad_graph};
TAPEGRAD_REGISTER_OP(kRelu);

}  // namespace

Tensor relu(const Tensor& x) {
  return unary_forward(kRelu, x,
                       []<class T>(T v) { return (v > T(0) || std::isnan(v)) ? v : T(0); });
}

}  // namespace tapegrad
