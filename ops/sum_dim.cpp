// sum_dim: the sum along one dim (torch.sum(x, dim, keepdim)).
#include "ops/detail/op_util.h"
#include "ops/ops.h"
#include "ops/detail/reduce_dim.h"

namespace tapegrad {

namespace {

void sum_dim_backward(Tape& tape, const Node& node) {
  // Y = Σ_dim X  =>  dX += dY broadcast along dim
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    T* dx = tape.grad_for<T>(node, 0, x.shape);
    if (dx == nullptr) return;
    const T* dy = node.grad_as<T>();
    const DimView v{node.iattr[0], node.iattr[1], node.iattr[2]};
    for_each_reduced(v, [&](int64_t out, int64_t in, int64_t) { dx[in] += dy[out]; });
  });
}

const OpDef kSumDim{"sum_dim", sum_dim_backward};
TAPEGRAD_REGISTER_OP(kSumDim);

}  // namespace

Tensor sum(const Tensor& x, int dim, bool keepdim) {
  const DimReduction r = plan_dim_reduction("sum_dim", x, dim, keepdim);
  Tensor y = x.tape().record(kSumDim, r.out_shape, x.dtype(), {x});
  Node& n = y.tape().node(y.id());
  n.iattr = {r.view.outer, r.view.size, r.view.inner, r.dim};
  dispatch(y.dtype(), [&]<class T>() {
    sum_along<T>(y.tape().arena(), r.view, value_of<T>(x), value_of<T>(y), 1.0);
  });
  return y;
}

}  // namespace tapegrad
