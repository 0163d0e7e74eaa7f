// logaddexp: ln(eᵃ + eᵇ) elementwise with broadcasting, without overflow, torch.logaddexp.
#include <cmath>
#include <cstdint>

#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/ops/detail/binary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void logaddexp_backward(Tape& tape, const Node& node) {
  // Y = ln(eᴬ + eᴮ)  =>  dA += reduce(dY / (1 + e^(B − A))), dB += reduce(dY / (1 + e^(A − B)))
  binary_backward_rows(
      tape, node,
      []<class T>(const T* a, const T* b, const T*, const T* dy, T* ga, T* gb, int64_t n) {
        for (int k = 0; k < 2; ++k) {
          T* g = k == 0 ? ga : gb;
          if (g == nullptr) continue;
          const T* from = k == 0 ? b : a;  // the exponent is the other operand minus this one
          const T* to = k == 0 ? a : b;
          for (int64_t i = 0; i < n; ++i) g[i] = from[i] - to[i];
          vmath::exp(g, g, n);
          for (int64_t i = 0; i < n; ++i) g[i] = dy[i] / (T(1) + g[i]);
        }
      });
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
  // torch's vector kernel: max(a, b) + log1p(exp(−|a − b|)) (SLEEF's exp and log1p), except an
  // infinity added to itself, which stays (−inf + −inf would give NaN).
  return binary_forward_rows(kLogaddexp, a, b,
                             []<class T>(const T* x, const T* z, T* y, int64_t n) {
                               for (int64_t i = 0; i < n; ++i) y[i] = -std::abs(x[i] - z[i]);
                               vmath::exp(y, y, n);
                               vmath::map(vmath::Unary::kLog1p, y, y, n);
                               for (int64_t i = 0; i < n; ++i) {
                                 const T m = x[i] < z[i] ? z[i] : x[i];
                                 y[i] = std::isinf(x[i]) & (x[i] == z[i]) ? x[i] : m + y[i];
                               }
                             });
}

}  // namespace tapegrad
