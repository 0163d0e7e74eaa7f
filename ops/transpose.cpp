// transpose: swaps two dims of a tensor of any rank, copying into a new contiguous tensor.
#include <tapegrad/ops/detail/layout_copy.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct TransposeState {
  int dim0, dim1;  // normalised to 0..rank-1
};

void transpose_backward(Tape& tape, const Node& node) {
  // Y = X with dims d0, d1 swapped  =>  dX += dY with dims d0, d1 swapped back
  dispatch(node.dtype, [&]<class T>() {
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      layout::swap_dims<true>(node.grad_as<const T>(), node.shape.dims(),
                              node.state_as<TransposeState>().dim0,
                              node.state_as<TransposeState>().dim1, d);
    }
  });
}

void transpose_grad_graph(GradGraph& g) {
  // Y = X with dims d0, d1 swapped  =>  dX += dY with them swapped back
  const TransposeState s = g.state<TransposeState>();
  g.add(0, transpose(g.grad(), s.dim0, s.dim1));
}

const OpDef kTranspose{.name = "transpose",
                       .backward = transpose_backward,
                       .arguments =
                           [](const Tape&, const Node& n) {
                             const auto [dim0, dim1] = n.state_as<TransposeState>();
                             return "dims " + std::to_string(dim0) + ", " + std::to_string(dim1);
                           },
                       .grad_graph = transpose_grad_graph};
TAPEGRAD_REGISTER_OP(kTranspose);

}  // namespace

Tensor transpose(const Tensor& x, int dim0, int dim1) {
  const int d0 = layout::checked_dim("transpose", "x", x, dim0);
  const int d1 = layout::checked_dim("transpose", "x", x, dim1);
  Shape shape = x.shape();
  if (shape.rank() > 0) std::swap(shape[d0], shape[d1]);
  Tensor y = x.tape().record(kTranspose, shape, x.dtype(), {x}, TransposeState{d0, d1});
  dispatch(y.dtype(), [&]<class T>() {
    layout::swap_dims<false>(x.data<T>(), x.shape().dims(), d0, d1, output_data<T>(y));
  });
  return y;
}

}  // namespace tapegrad
