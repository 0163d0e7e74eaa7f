// softplus: log(1 + exp(β·x)) / β, and x itself where β·x > threshold, torch.nn.functional.softplus
// in torch's CPU order of operations.
#include <cmath>
#include <string>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct SoftplusState {
  double beta;
  double threshold;
};

void softplus_backward(Tape& tape, const Node& node) {
  // Y = log1p(e^(βX)) / β  =>  dX += dY·z / (z + 1), z = e^(βX); dY where βX > threshold
  const SoftplusState s = node.state_as<SoftplusState>();
  unary_backward_from_input(tape, node, [s]<class T>(T dy, T x) {
    const T bx = x * static_cast<T>(s.beta);
    const T z = std::exp(bx);
    return bx > static_cast<T>(s.threshold) ? dy : dy * z / (z + T(1));
  });
}

void softplus_grad_graph(GradGraph& g) {
  // Y = log1p(e^(βX)) / β  =>  dX += where(βX > threshold, dY, dY·z / (z + 1)), z = e^(βX)
  const SoftplusState s = g.state<SoftplusState>();
  const Tensor bx = scale(g.input(0), s.beta), dy = g.grad();
  const Tensor z = exp(bx);
  g.add(0, where(gt(bx, s.threshold), dy, div(mul(dy, z), z + 1.0)));
}

std::string softplus_arguments(const Tape&, const Node& node) {
  const SoftplusState s = node.state_as<SoftplusState>();
  return "beta " + number_text(s.beta) + ", threshold " + number_text(s.threshold);
}

const OpDef kSoftplus{.name = "softplus",
                      .backward = softplus_backward,
                      .arguments = softplus_arguments,
                      .saves = saves::kInput0,
                      .grad_graph = softplus_grad_graph};
TAPEGRAD_REGISTER_OP(kSoftplus);

}  // namespace

Tensor softplus(const Tensor& x, double beta, double threshold) {
  check_scalar_argument("softplus", x, "beta", beta);
  check_scalar_argument("softplus", x, "threshold", threshold);
  if (beta == 0.0 || (x.dtype() == DType::Float32 && static_cast<float>(beta) == 0.0f)) {
    throw_unary_error("softplus", x, "beta " + number_text(beta) + " must not be 0");
  }
  Tensor y = x.tape().record(kSoftplus, x.shape(), x.dtype(), {x}, SoftplusState{beta, threshold});
  dispatch(y.dtype(), [&]<class T>() {
    const T b = static_cast<T>(beta), t = static_cast<T>(threshold);
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) {
      const T bx = in[i] * b;
      out[i] = bx > t ? in[i] : std::log1p(std::exp(bx)) / b;
    }
  });
  return y;
}

}  // namespace tapegrad
