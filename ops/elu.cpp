// elu: x where x > 0, else alpha·(exp(x) − 1), torch.nn.functional.elu in torch's CPU order of
// operations (exp(x) − 1, not expm1: torch 1.13's kernel rounds so near 0).
#include <cmath>
#include <string>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct EluState {
  double alpha;
};

void elu_backward(Tape& tape, const Node& node) {
  // Y = X <= 0 ? α(eˣ − 1) : X  =>  dX += X <= 0 ? dY·α·eˣ : dY   (at 0 the slope α, as torch)
  const double alpha = node.state_as<EluState>().alpha;
  unary_backward_from_input(tape, node, [alpha]<class T>(T dy, T x) {
    return x <= T(0) ? dy * static_cast<T>(alpha) * std::exp(x) : dy;
  });
}

void elu_grad_graph(GradGraph& g) {
  // Y = X <= 0 ? α(eˣ − 1) : X  =>  dX += where(X <= 0, dY·α·eˣ, dY)
  const double alpha = g.state<EluState>().alpha;
  const Tensor x = g.input(0), dy = g.grad();
  g.add(0, where(le(x, 0.0), mul(scale(dy, alpha), exp(x)), dy));
}

std::string elu_arguments(const Tape&, const Node& node) {
  return "alpha " + number_text(node.state_as<EluState>().alpha);
}

const OpDef kElu{.name = "elu",
                 .backward = elu_backward,
                 .arguments = elu_arguments,
                 .saves = saves::kInput0,
                 .grad_graph = elu_grad_graph};
TAPEGRAD_REGISTER_OP(kElu);

}  // namespace

Tensor elu(const Tensor& x, double alpha) {
  check_scalar_argument("elu", x, "alpha", alpha);
  Tensor y = x.tape().record(kElu, x.shape(), x.dtype(), {x}, EluState{alpha});
  dispatch(y.dtype(), [&]<class T>() {
    const T a = static_cast<T>(alpha);
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] <= T(0) ? (std::exp(in[i]) - T(1)) * a : in[i];
  });
  return y;
}

}  // namespace tapegrad
