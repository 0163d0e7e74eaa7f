// leaky_relu: x where x > 0, else negative_slope·x, torch.nn.functional.leaky_relu.
#include <string>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct LeakyReluState {
  double negative_slope;
};

void leaky_relu_backward(Tape& tape, const Node& node) {
  // Y = X > 0 ? X : s·X  =>  dX += X > 0 ? dY : dY·s   (at 0 the slope s, as torch)
  const double s = node.state_as<LeakyReluState>().negative_slope;
  unary_backward_from_input(
      tape, node, [s]<class T>(T dy, T x) { return x > T(0) ? dy : dy * static_cast<T>(s); });
}

void leaky_relu_grad_graph(GradGraph& g) {
  // Y = X > 0 ? X : s·X  =>  dX += where(X > 0, dY, dY·s)   (a constant mask: the second
  // derivative is 0)
  const double s = g.state<LeakyReluState>().negative_slope;
  const Tensor x = g.input(0), dy = g.grad();
  g.add(0, where(gt(x, 0.0), dy, scale(dy, s)));
}

std::string leaky_relu_arguments(const Tape&, const Node& node) {
  return "negative_slope " + number_text(node.state_as<LeakyReluState>().negative_slope);
}

const OpDef kLeakyRelu{.name = "leaky_relu",
                       .backward = leaky_relu_backward,
                       .arguments = leaky_relu_arguments,
                       .saves = saves::kInput0,
                       .grad_graph = leaky_relu_grad_graph};
TAPEGRAD_REGISTER_OP(kLeakyRelu);

}  // namespace

Tensor leaky_relu(const Tensor& x, double negative_slope) {
  check_scalar_argument("leaky_relu", x, "negative_slope", negative_slope);
  Tensor y = x.tape().record(kLeakyRelu, x.shape(), x.dtype(), {x}, LeakyReluState{negative_slope});
  dispatch(y.dtype(), [&]<class T>() {
    const T s = static_cast<T>(negative_slope);
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] > T(0) ? in[i] : in[i] * s;
  });
  return y;
}

}  // namespace tapegrad
