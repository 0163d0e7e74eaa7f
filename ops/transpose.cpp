// transpose: swaps two dims of a tensor of any rank, copying into a new contiguous tensor.
#include "ops/detail/layout_copy.h"
#include "ops/ops.h"

namespace tapegrad {

namespace {

void transpose_backward(Tape& tape, const Node& node) {
  // Y = X with dims d0, d1 swapped  =>  dX += dY with dims d0, d1 swapped back
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.grad_for<T>(node, 0, x.shape)) {
      layout::swap_dims<true>(node.grad_as<const T>(), node.shape.dims(),
                              static_cast<int>(node.iattr[0]), static_cast<int>(node.iattr[1]), d);
    }
  });
}

const OpDef kTranspose{"transpose", transpose_backward};
TAPEGRAD_REGISTER_OP(kTranspose);

}  // namespace

Tensor transpose(const Tensor& x, int dim0, int dim1) {
  const int d0 = layout::checked_dim("transpose", "x", x, dim0);
  const int d1 = layout::checked_dim("transpose", "x", x, dim1);
  Shape shape = x.shape();
  if (shape.rank() > 0) std::swap(shape[d0], shape[d1]);
  Tensor y = x.tape().record(kTranspose, shape, x.dtype(), {x});
  Node& n = y.tape().node(y.id());
  n.iattr[0] = d0;
  n.iattr[1] = d1;
  dispatch(y.dtype(), [&]<class T>() {
    layout::swap_dims<false>(value_of<T>(x), x.shape().dims(), d0, d1, value_of<T>(y));
  });
  return y;
}

}  // namespace tapegrad
