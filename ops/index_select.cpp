// index_select: the slices of x at the given indices along one dim (torch.index_select).
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/index_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct IndexSelectState {
  int dim;  // normalised to 0..rank-1 (0 for a 0-dim x)
  SavedIndex index;
};

void index_select_backward(Tape& tape, const Node& node) {
  // Y[.., i, ..] = X[.., index[i], ..]  =>  dX[.., index[i], ..] += dY[.., i, ..] (repeats add)
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      const auto& [dim, index] = node.state_as<IndexSelectState>();
      const int64_t n = index.shape.numel();
      const int64_t size = x.shape.rank() == 0 ? 1 : x.shape[dim];
      const int64_t inner = layout::inner_size(x.shape, dim);
      const int64_t outer = x.shape.rank() == 0 ? 1 : layout::outer_size(x.shape, dim);
      const T* dy = node.grad_as<const T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < n; ++i) {
          layout::copy_run<true>(dy + (o * n + i) * inner, d + (o * size + index.values[i]) * inner,
                                 inner);
        }
      }
    }
  });
}

void index_select_grad_graph(GradGraph& g) {
  // Y = index_select(X, dim, index)  =>  dX += index_add(zeros(X), dim, index, dY)
  const auto& s = g.state<IndexSelectState>();
  const int dim = s.dim;
  const Ids index = to_ids(s.index);
  const Shape shape = g.input(0).shape();
  g.add(0, index_add(zeros(shape, g.grad().dtype()), dim, index, g.grad()));
}

const OpDef kIndexSelect{.name = "index_select",
                         .backward = index_select_backward,
                         .arguments =
                             [](const Tape& t, const Node& n) {
                               const auto& s = n.state_as<IndexSelectState>();
                               return dim_text(s.dim, t.input(n, 0).shape.rank()) + ", " +
                                      std::to_string(s.index.shape.numel()) + " indices";
                             },
                         .state_bytes =
                             [](const Tape&, const Node& n) {
                               return n.state_as<IndexSelectState>().index.shape.numel() *
                                      int64_t{sizeof(int64_t)};
                             },
                         .grad_graph = index_select_grad_graph};
TAPEGRAD_REGISTER_OP(kIndexSelect);

}  // namespace

Tensor index_select(const Tensor& x, int dim, const Ids& index) {
  const int d = layout::checked_dim("index_select", "x", x, dim);
  if (index.rank() > 1) {
    throw_unary_error("index_select", x, index_text(index) + " must be 0-dim or 1-dim");
  }
  if (x.rank() == 0 && index.numel() != 1) {  // torch 1.13 returns garbage for none
    throw_unary_error("index_select", x,
                      index_text(index) + ": a 0-dim x takes exactly one index, not " +
                          std::to_string(index.numel()));
  }
  const int64_t size = indexed_size(x, d);
  check_index_values("index_select", x, index, dim, size);
  Shape shape = x.shape();
  if (x.rank() > 0) shape[d] = index.numel();
  const SavedIndex saved = save_index(x.tape(), index);
  Tensor y = x.tape().record(kIndexSelect, shape, x.dtype(), {x}, IndexSelectState{d, saved});
  dispatch(y.dtype(), [&]<class T>() {
    const int64_t n = index.numel();
    const int64_t inner = layout::inner_size(x.shape(), d);
    const int64_t outer = x.rank() == 0 ? 1 : layout::outer_size(x.shape(), d);
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < n; ++i) {
        layout::copy_run<false>(xv + (o * size + saved.values[i]) * inner, yv + (o * n + i) * inner,
                                inner);
      }
    }
  });
  return y;
}

}  // namespace tapegrad
