// floor, ceil and round (half to even): three ops sharing everything but the rounding function,
// with torch's zero gradient.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void rounding_backward(Tape& tape, const Node& node) {
  // Y = floor X, ceil X or round X  =>  dX += 0   (torch's zeros_like(grad))
  dispatch(node.dtype, [&]<class T>() { tape.input_grad<T>(node, 0).to_add(); });
}

void rounding_grad_graph(GradGraph& g) {
  // Y = floor X, ceil X or round X  =>  dX += 0
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
TAPEGRAD_REGISTER_OP(kRound);

template <class F>
Tensor rounded(const OpDef& op, const Tensor& x, F f) {
  Tensor y = x.tape().record(op, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) out[i] = f(in[i]);
  });
  return y;
}

}  // namespace

Tensor floor(const Tensor& x) {
  return rounded(kFloor, x, [](auto v) { return std::floor(v); });
}

Tensor ceil(const Tensor& x) {
  return rounded(kCeil, x, [](auto v) { return std::ceil(v); });
}

Tensor round(const Tensor& x) {
  // nearbyint in the default rounding mode (to nearest, ties to even) is torch's round.
  return rounded(kRound, x, [](auto v) { return std::nearbyint(v); });
}

}  // namespace tapegrad
