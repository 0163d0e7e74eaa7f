// gelu: the tanh approximation of GELU used by the book's GPT (torch's approximate='tanh').
#include <cmath>

#include "ops/detail/op_util.h"
#include "ops/ops.h"

namespace tapegrad {

namespace {

constexpr double kBeta = 0.7978845608028654;  // √(2/π), as torch: M_SQRT2 · M_2_SQRTPI · 0.5
constexpr double kKappa = 0.044715;

void gelu_backward(Tape& tape, const Node& node) {
  // Y = ½X(1 + tanh u), u = β(X + κX³)  =>  dX += dY·(½(1 + tanh u) + ½X(1 − tanh² u)·β(1 + 3κX²))
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    T* dx = tape.grad_for<T>(node, 0);
    if (dx == nullptr) return;
    const T* in = x.value_as<T>();
    const T* dy = node.grad_as<T>();
    const T beta = static_cast<T>(kBeta), kappa = static_cast<T>(kKappa);
    const int64_t n = x.shape.numel();
    for (int64_t i = 0; i < n; ++i) {
      const T v = in[i], v2 = v * v;
      const T th = std::tanh(beta * (v + kappa * (v2 * v)));  // torch's order of operations
      const T left = T(0.5) * (T(1) + th);
      const T right = T(0.5) * v * (T(1) - th * th) * (beta * (T(1) + T(3) * kappa * v2));
      dx[i] += dy[i] * (left + right);
    }
  });
}

const OpDef kGelu{.name = "gelu", .backward = gelu_backward, .saves = saves::kInput0};
TAPEGRAD_REGISTER_OP(kGelu);

}  // namespace

Tensor gelu(const Tensor& x) {
  Tensor y = x.tape().record(kGelu, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const T* in = value_of<T>(x);
    T* out = value_of<T>(y);
    const T beta = static_cast<T>(kBeta), kappa = static_cast<T>(kKappa);
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) {
      const T v = in[i];
      out[i] = T(0.5) * v * (T(1) + std::tanh(beta * (v + kappa * (v * v * v))));
    }
  });
  return y;
}

}  // namespace tapegrad
