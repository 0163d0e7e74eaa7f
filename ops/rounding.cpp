// floor, ceil, round (half to even) and trunc: four ops sharing everything but the rounding
// function, with torch's zero gradient.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void rounding_backward(Tape& tape, const Node& node) {
  // Y = floor X, ceil X, round X or trunc X  =>  dX += 0   (torch's zeros_like(grad))
  dispatch(node.dtype, [&]<class T>() { tape.input_grad<T>(node, 0).to_add(); });
}

void rounding_grad_graph(GradGraph& g) {
  // Y = floor X, ceil X, round X or trunc X  =>  dX += 0
  const Tensor x = g.input(0);
  const Shape shape = x.shape();
  g.add(0, zeros(shape, x.dtype()));
}

const OpDef kFloor{
    .name = "floor", .backward = rounding_backward, .grad_graph = rounding_grad_graph};
const OpDef kCeil{.name = "ceil", .backward = rounding_backward, .grad_graph = rounding_grad_graph};
const OpDef kRound{
    .name = "round", .backward = rounding_backward, .grad_graph = rounding_grad_graph};
TAPEGRAD_REGISTER_OP(kFloor);
TAPEGRAD_REGISTER_OP(kCeil);
const OpDef kTrunc{
    .name = "trunc", .backward = rounding_backward, .grad_graph = rounding_grad_graph};
TAPEGRAD_REGISTER_OP(kRound);
TAPEGRAD_REGISTER_OP(kTrunc);

}  // namespace

Tensor floor(const Tensor& x) {
  return unary_forward_kernel(kFloor, x, vmath::Unary::kFloor);
}

Tensor ceil(const Tensor& x) {
  return unary_forward_kernel(kCeil, x, vmath::Unary::kCeil);
}

Tensor round(const Tensor& x) {
  // nearbyint in the default rounding mode (to nearest, ties to even) is torch's round.
  return unary_forward_kernel(kRound, x, vmath::Unary::kRound);
}

Tensor trunc(const Tensor& x) {
  return unary_forward_kernel(kTrunc, x, vmath::Unary::kTrunc);
}

}  // namespace tapegrad
