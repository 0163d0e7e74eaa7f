// logaddexp: ln(eᵃ + eᵇ) elementwise with broadcasting, without overflow, torch.logaddexp.
#include <algorithm>
#include <cmath>

#include <tapegrad/ops/detail/binary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void logaddexp_backward(Tape& tape, const Node& node) {
  // Y = ln(eᴬ + eᴮ)  =>  dA += reduce(dY / (1 + e^(B − A))), dB += reduce(dY / (1 + e^(A − B)))
  binary_backward(
      tape, node, []<class T>(T dy, T a, T b, T) { return dy / (T(1) + std::exp(b - a)); },
      []<class T>(T dy, T a, T b, T) { return dy / (T(1) + std::exp(a - b)); });
}

void logaddexp_grad_graph(GradGraph& g) {
  // Y = ln(eᴬ + eᴮ)  =>  dA += reduce(dY / (1 + e^(B − A))), dB += reduce(dY / (1 + e^(A − B)))
  const Tensor a = g.input(0), b = g.input(1);
  const Shape a_shape = a.shape(), b_shape = b.shape();
  if (g.needs(0)) g.add(0, sum_to_size(div(g.grad(), 1.0 + exp(b - a)), a_shape));
  if (g.needs(1)) g.add(1, sum_to_size(div(g.grad(), 1.0 + exp(a - b)), b_shape));
}

const OpDef kLogaddexp{.name = "logaddexp",
                       .backward = logaddexp_backward,
                       .saves = saves::kInput0 | saves::kInput1,
                       .grad_graph = logaddexp_grad_graph};
TAPEGRAD_REGISTER_OP(kLogaddexp);

}  // namespace

Tensor logaddexp(const Tensor& a, const Tensor& b) {
  // torch's kernel: an infinity added to itself stays (−inf + −inf would give NaN below).
  return binary_forward(kLogaddexp, a, b, []<class T>(T x, T z) {
    if (std::isinf(x) && x == z) return x;
    return std::max(x, z) + std::log1p(std::exp(-std::abs(x - z)));
  });
}

}  // namespace tapegrad
