// log: elementwise natural logarithm; log(0) = -inf and log(x < 0) = nan, as in torch.
#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void log_backward(Tape& tape, const Node& node) {
  // Y = ln X  =>  dX += dY / X
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      ArrayMap<T>(d, x.shape.numel()) += grad_array_of<T>(node) / array_of<T>(x);
    }
  });
}

void log_grad_graph(GradGraph& g) {
  // Y = ln X  =>  dX += dY / X
  g.add(0, div(g.grad(), g.input(0)));
}

const OpDef kLog{
    .name = "log", .backward = log_backward, .saves = saves::kInput0, .grad_graph = log_grad_graph};
TAPEGRAD_REGISTER_OP(kLog);

}  // namespace

Tensor log(const Tensor& x) {
  Tensor y = x.tape().record(kLog, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() { array_of<T>(y.node()) = array_of<T>(x.node()).log(); });
  return y;
}

}  // namespace tapegrad
