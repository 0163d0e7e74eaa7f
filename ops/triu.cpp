// triu: x with the elements below the k-th diagonal of the last two dims zeroed, torch.triu.
#include <algorithm>

#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/triangle.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct TriuState {
  int64_t diagonal;  // clamped to the matrix
};

void triu_backward(Tape& tape, const Node& node) {
  // Y = X ⊙ [j − i ≥ k]  =>  dX += dY ⊙ [j − i ≥ k]
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* dy = node.grad_as<const T>();
    for_each_triangle_row(node.shape, node.state_as<TriuState>().diagonal,
                          [&](int64_t row, int64_t split, int64_t cols) {
                            ArrayMap<T>(dx + row + split, cols - split) +=
                                ConstArrayMap<T>(dy + row + split, cols - split);
                          });
  });
}

void triu_grad_graph(GradGraph& g) {
  // Y = X ⊙ [j − i ≥ k]  =>  dX += triu(dY, k)
  g.add(0, triu(g.grad(), g.state<TriuState>().diagonal));
}

const OpDef kTriu{.name = "triu",
                  .backward = triu_backward,
                  .arguments =
                      [](const Tape&, const Node& n) {
                        return "diagonal " + std::to_string(n.state_as<TriuState>().diagonal);
                      },
                  .grad_graph = triu_grad_graph};
TAPEGRAD_REGISTER_OP(kTriu);

}  // namespace

Tensor triu(const Tensor& x, int64_t diagonal) {
  if (x.rank() < 2) {
    throw_unary_error("triu", x, "expected at least 2 dims (the last two form the matrices)");
  }
  // Past these bounds every element is kept (or dropped); clamping keeps i + k from overflowing.
  const int64_t k = std::clamp<int64_t>(diagonal, -x.size(-2), x.size(-1));
  Tensor y = x.tape().record(kTriu, x.shape(), x.dtype(), {x}, TriuState{k});
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    for_each_triangle_row(x.shape(), k, [&](int64_t row, int64_t split, int64_t cols) {
      std::fill(yv + row, yv + row + split, T(0));
      std::copy(xv + row + split, xv + row + cols, yv + row + split);
    });
  });
  return y;
}

}  // namespace tapegrad
