// mean: the mean of all elements (a scalar).
#include "ops/detail/op_util.h"
#include "ops/ops.h"

namespace tapegrad {

namespace {

void mean_backward(Tape& tape, const Node& node) {
  // y = Σ x / n  =>  dX += dy / n (broadcast)
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.grad_for<T>(node, 0)) {
      const int64_t n = x.shape.numel();
      ArrayMap<T>(d, n) += node.grad_as<T>()[0] / static_cast<T>(n);
    }
  });
}

const OpDef kMean{.name = "mean", .backward = mean_backward};
TAPEGRAD_REGISTER_OP(kMean);

}  // namespace

Tensor mean(const Tensor& x) {
  Tensor y = x.tape().record(kMean, Shape{}, x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    // Summed in double (float32 keeps its precision); an empty tensor gives 0/0 = NaN, as torch.
    const double total = array_of<T>(x.node()).template cast<double>().sum();
    value_of<T>(y)[0] = static_cast<T>(total / static_cast<double>(x.numel()));
  });
  return y;
}

}  // namespace tapegrad
