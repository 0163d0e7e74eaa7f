// tril: x with the elements above the k-th diagonal of the last two dims zeroed, torch.tril.
#include <algorithm>

#include "ops/detail/op_util.h"
#include "ops/ops.h"
#include "ops/detail/triangle.h"

namespace tapegrad {

namespace {

void tril_backward(Tape& tape, const Node& node) {
  // Y = X ⊙ [j − i ≤ k]  =>  dX += dY ⊙ [j − i ≤ k]
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    T* dx = tape.grad_for<T>(node, 0, x.shape);
    if (dx == nullptr) return;
    const T* dy = node.grad_as<const T>();
    for_each_triangle_row(node.shape, node.iattr[0] + 1, [&](int64_t row, int64_t split, int64_t) {
      ArrayMap<T>(dx + row, split) += ConstArrayMap<T>(dy + row, split);
    });
  });
}

const OpDef kTril{"tril", tril_backward};
TAPEGRAD_REGISTER_OP(kTril);

}  // namespace

Tensor tril(const Tensor& x, int64_t diagonal) {
  if (x.rank() < 2) {
    throw_unary_error("tril", x, "expected at least 2 dims (the last two form the matrices)");
  }
  // Past these bounds every element is kept (or dropped); clamping keeps i + k + 1 from
  // overflowing.
  const int64_t k = std::clamp<int64_t>(diagonal, -x.size(-2), x.size(-1));
  Tensor y = x.tape().record(kTril, x.shape(), x.dtype(), {x});
  y.tape().node(y.id()).iattr[0] = k;
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = value_of<T>(x);
    T* yv = value_of<T>(y);
    for_each_triangle_row(x.shape(), k + 1, [&](int64_t row, int64_t split, int64_t cols) {
      std::copy(xv + row, xv + row + split, yv + row);
      std::fill(yv + row + split, yv + row + cols, T(0));
    });
  });
  return y;
}

}  // namespace tapegrad
