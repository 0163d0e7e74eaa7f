// narrow: the slice start..start+length of one dim (x.narrow in torch), copied.
#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/layout_copy.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct NarrowState {
  int dim;  // normalised to 0..rank-1
  int64_t start;
};

void narrow_backward(Tape& tape, const Node& node) {
  // Y = X[.., s:s+l, ..] (along dim)  =>  dX[.., s:s+l, ..] += dY, zero elsewhere
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      const auto [dim, start] = node.state_as<NarrowState>();
      const int64_t inner = layout::inner_size(x.shape, dim);
      const int64_t run = node.shape[dim] * inner;
      layout::copy_blocks<true>(node.grad_as<const T>(), run, d + start * inner,
                                x.shape[dim] * inner, layout::outer_size(x.shape, dim), run);
    }
  });
}

// The length is the output's size along dim.
void narrow_grad_graph(GradGraph& g) {
  // Y = X[.., s:s+l, ..]  =>  dX += dY placed at s along dim, zeros elsewhere
  const NarrowState s = g.state<NarrowState>();
  const Shape shape = g.input(0).shape();
  g.add(0, placed(g.grad(), shape, s.dim, s.start));
}

const OpDef kNarrow{.name = "narrow",
                    .backward = narrow_backward,
                    .arguments =
                        [](const Tape& t, const Node& n) {
                          const auto [dim, start] = n.state_as<NarrowState>();
                          return dim_text(dim, t.input(n, 0).shape.rank()) + ", start " +
                                 std::to_string(start) + ", length " + std::to_string(n.shape[dim]);
                        },
                    .grad_graph = narrow_grad_graph};
TAPEGRAD_REGISTER_OP(kNarrow);

}  // namespace

Tensor narrow(const Tensor& x, int dim, int64_t start, int64_t length) {
  if (x.rank() == 0) throw_unary_error("narrow", x, "cannot narrow a 0-dim tensor");
  const int d = layout::checked_dim("narrow", "x", x, dim);
  const int64_t size = x.shape()[d];
  if (start < -size || start > size) {
    throw_unary_error("narrow", x,
                      "start " + std::to_string(start) + " is out of range for dim " +
                          std::to_string(dim) + " of size " + std::to_string(size));
  }
  if (start < 0) start += size;
  if (length < 0)
    throw_unary_error("narrow", x, "length " + std::to_string(length) + " is negative");
  if (start + length > size) {
    throw_unary_error("narrow", x,
                      "start " + std::to_string(start) + " + length " + std::to_string(length) +
                          " exceeds size " + std::to_string(size) + " of dim " +
                          std::to_string(dim));
  }
  Shape shape = x.shape();
  shape[d] = length;
  Tensor y = x.tape().record(kNarrow, shape, x.dtype(), {x}, NarrowState{d, start});
  dispatch(y.dtype(), [&]<class T>() {
    const int64_t inner = layout::inner_size(x.shape(), d);
    layout::copy_blocks<false>(x.data<T>() + start * inner, size * inner, output_data<T>(y),
                               length * inner, layout::outer_size(x.shape(), d), length * inner);
  });
  return y;
}

}  // namespace tapegrad
