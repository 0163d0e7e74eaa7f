// dropout: torch's CPU dropout, bit for bit: the same keep mask and the same float arithmetic.
//
// torch (aten/src/ATen/native/Dropout.cpp, CPU path) computes
//   noise = empty_like(x).bernoulli_(1 - p); noise.div_(1 - p); return x * noise;
// so a kept element is x * (T(1) / T(1 - p)) in x's dtype (dropout_scale<T>, graph/random.h)
// and a dropped one is x * 0 (-0 for negative x, NaN for inf/NaN x). The keep mask (one byte
// per element, from the tape's arena) stays on the node; backward multiplies dY by the same
// noise, so it draws nothing. In eval mode, and for p == 0, x itself is returned (no node, no
// draw), like torch returning its input.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/kernels/random/random.h>
#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct DropoutState {
  double p;
  const uint8_t* keep;  // one byte per element, from the tape's arena
};

void dropout_backward(Tape& tape, const Node& node) {
  // Y = X ⊙ keep / (1 − p)  =>  dX += dY ⊙ keep / (1 − p)   (the forward's saved keep mask)
  dispatch(node.dtype, [&]<class T>() {
    const auto [dx, overwrite, numel] = tape.input_grad<T>(node, 0);  // written when still zero
    if (dx == nullptr) return;
    const T* dy = node.grad_as<const T>();
    const auto& [p, keep] = node.state_as<DropoutState>();
    vmath::masked_scale(dy, keep, dropout_scale<T>(p), dx, numel, !overwrite);
  });
}

void dropout_grad_graph(GradGraph& g) {
  // Y = X ⊙ keep / (1 − p)  =>  dX += dY ⊙ keep / (1 − p)   (the same saved mask)
  const DropoutState s = g.state<DropoutState>();
  const Tensor x = g.input(0);
  std::vector<double> keep(s.keep, s.keep + x.numel());
  const Tensor mask = from_values(x.shape(), keep, x.dtype());
  g.add(0, div_scalar(mul(g.grad(), mask), 1.0 - s.p));
}

const OpDef kDropout{
    .name = "dropout",
    .backward = dropout_backward,
    .arguments = [](const Tape&,
                    const Node& n) { return "p = " + number_text(n.state_as<DropoutState>().p); },
    .saves = saves::kNothing,
    .state_bytes = [](const Tape&, const Node& n) { return n.shape.numel(); },
    .grad_graph = dropout_grad_graph};
TAPEGRAD_REGISTER_OP(kDropout);

}  // namespace

Tensor dropout(const Tensor& x, double p, bool training, Generator& generator) {
  if (!(p >= 0.0 && p < 1.0)) {
    throw_unary_error("dropout", x, "p must be in [0, 1), got " + std::to_string(p));
  }
  if (!training || p == 0.0) return x;
  const int64_t n = x.numel();
  auto* keep = x.tape().arena().allocate_array<uint8_t>(n);
  Tensor y = x.tape().record(kDropout, x.shape(), x.dtype(), {x}, DropoutState{p, keep});
  generator.dropout_keep_mask(keep, n, p, random_kernels::block_loops());
  dispatch(y.dtype(), [&]<class T>() {
    vmath::masked_scale(x.data<T>(), keep, dropout_scale<T>(p), output_data<T>(y), n);
  });
  return y;
}

}  // namespace tapegrad
