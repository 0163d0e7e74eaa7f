// select: x[index] along one dim, that dim removed (the book's inputs[1], attn_weights_2[i]).
#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/layout_copy.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct SelectState {
  int dim;  // normalised to 0..rank-1
  int64_t index;
};

void select_backward(Tape& tape, const Node& node) {
  // Y = X[.., i, ..] (along dim)  =>  dX[.., i, ..] += dY, zero elsewhere
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      const auto [dim, index] = node.state_as<SelectState>();
      const int64_t inner = layout::inner_size(x.shape, dim);
      layout::copy_blocks<true>(node.grad_as<const T>(), inner, d + index * inner,
                                x.shape[dim] * inner, layout::outer_size(x.shape, dim), inner);
    }
  });
}

void select_grad_graph(GradGraph& g) {
  // Y = X[.., i, ..]  =>  dX += dY placed at i along dim, zeros elsewhere
  const SelectState s = g.state<SelectState>();
  const Shape shape = g.input(0).shape();
  g.add(0, placed(keepdim_view(g.grad(), shape, s.dim), shape, s.dim, s.index));
}

const OpDef kSelect{.name = "select",
                    .backward = select_backward,
                    .arguments =
                        [](const Tape& t, const Node& n) {
                          const auto [dim, index] = n.state_as<SelectState>();
                          return dim_text(dim, t.input(n, 0).shape.rank()) + ", index " +
                                 std::to_string(index);
                        },
                    .grad_graph = select_grad_graph};
TAPEGRAD_REGISTER_OP(kSelect);

}  // namespace

Tensor select(const Tensor& x, int dim, int64_t index) {
  if (x.rank() == 0) throw_unary_error("select", x, "cannot select from a 0-dim tensor");
  const int d = layout::checked_dim("select", "x", x, dim);
  const int64_t size = x.shape()[d];
  if (index < -size || index >= size) {
    throw_unary_error("select", x,
                      "index " + std::to_string(index) + " is out of range for dim " +
                          std::to_string(dim) + " of size " + std::to_string(size));
  }
  if (index < 0) index += size;
  std::array<int64_t, kMaxRank> dims{};
  size_t r = 0;
  for (int i = 0; i < x.rank(); ++i) {
    if (i != d) dims[r++] = x.shape()[i];
  }
  Tensor y = x.tape().record(kSelect, Shape(std::span<const int64_t>(dims.data(), r)), x.dtype(),
                             {x}, SelectState{d, index});
  dispatch(y.dtype(), [&]<class T>() {
    const int64_t inner = layout::inner_size(x.shape(), d);
    layout::copy_blocks<false>(x.data<T>() + index * inner, size * inner, output_data<T>(y), inner,
                               layout::outer_size(x.shape(), d), inner);
  });
  return y;
}

}  // namespace tapegrad
