// square: elementwise x², torch.square (torch computes it as pow(x, 2)).
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void square_backward(Tape& tape, const Node& node) {
  // Y = X²  =>  dX += dY ⊙ (2·X)   (pow's backward for p = 2, as torch's)
  unary_backward_from_input(tape, node, []<class T>(T dy, T x) { return dy * (T(2) * x); });
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
  return unary_forward(kSquare, x, []<class T>(T v) { return v * v; });
}

}  // namespace tapegrad
