// sqrt: elementwise square root; sqrt(x < 0) = nan, and the gradient at 0 is inf, as in torch.
#include <cmath>

#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void sqrt_backward(Tape& tape, const Node& node) {
  // Y = √X  =>  dX += dY / (2·Y)   (reads the output, nothing saved)
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      ArrayMap<T>(d, x.shape.numel()) += grad_array_of<T>(node) / (T(2) * array_of<T>(node));
    }
  });
}

void sqrt_grad_graph(GradGraph& g) {
  // Y = √X  =>  dX += dY / (2·Y)
  g.add(0, div(g.grad(), scale(g.output(), 2.0)));
}

const OpDef kSqrt{.name = "sqrt",
                  .backward = sqrt_backward,
                  .saves = saves::kOutput,
                  .grad_graph = sqrt_grad_graph};
TAPEGRAD_REGISTER_OP(kSqrt);

}  // namespace

Tensor sqrt(const Tensor& x) {
  // std::sqrt, not Eigen's .sqrt(): with EIGEN_FAST_MATH (Eigen's default) the float32 packet
  // sqrt is an rsqrt estimate plus a Newton step, off in the last bits; IEEE sqrt is exact.
  return unary_forward(kSqrt, x, []<class T>(T v) { return std::sqrt(v); });
}

}  // namespace tapegrad
