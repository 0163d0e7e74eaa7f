// tril: x with the elements above the k-th diagonal of the last two dims zeroed, torch.tril.
#include <algorithm>

#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/triangle.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct TrilState {
  int64_t diagonal;  // clamped to the matrix
};

void tril_backward(Tape& tape, const Node& node) {
  // Y = X ⊙ [j − i ≤ k]  =>  dX += dY ⊙ [j − i ≤ k]
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* dy = node.grad_as<const T>();
    for_each_triangle_row(node.shape, node.state_as<TrilState>().diagonal + 1,
                          [&](int64_t row, int64_t split, int64_t) {
                            ArrayMap<T>(dx + row, split) += ConstArrayMap<T>(dy + row, split);
                          });
  });
}

void tril_grad_graph(GradGraph& g) {
  // Y = X ⊙ [j − i ≤ k]  =>  dX += tril(dY, k)
  g.add(0, tril(g.grad(), g.state<TrilState>().diagonal));
}

const OpDef kTril{.name = "tril",
                  .backward = tril_backward,
                  .arguments =
                      [](const Tape&, const Node& n) {
                        return "diagonal " + std::to_string(n.state_as<TrilState>().diagonal);
                      },
                  .grad_graph = tril_grad_graph};
TAPEGRAD_REGISTER_OP(kTril);

}  // namespace

Tensor tril(const Tensor& x, int64_t diagonal) {
  if (x.rank() < 2) {
    throw_unary_error("tril", x, "expected at least 2 dims (the last two form the matrices)");
  }
  // Past these bounds every element is kept (or dropped); clamping keeps i + k + 1 from
  // overflowing.
  const int64_t k = std::clamp<int64_t>(diagonal, -x.size(-2), x.size(-1));
  Tensor y = x.tape().record(kTril, x.shape(), x.dtype(), {x}, TrilState{k});
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    for_each_triangle_row(x.shape(), k + 1, [&](int64_t row, int64_t split, int64_t cols) {
      std::copy(xv + row, xv + row + split, yv + row);
      std::fill(yv + row + split, yv + row + cols, T(0));
    });
  });
  return y;
}

}  // namespace tapegrad
