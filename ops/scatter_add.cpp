// scatter_add: x plus src's elements added at an index along one dim (torch.scatter_add);
// repeated positions add up, in index's row-major order.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/index_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct ScatterAddState {
  int dim;  // normalised to 0..rank-1
  SavedIndex index;
};

void scatter_add_backward(Tape& tape, const Node& node) {
  // Y = X; Y[p with p_dim = index[p]] += S[p]  =>  dX += dY; dS[p] += dY[p with p_dim = index[p]]
  dispatch(node.dtype, [&]<class T>() {
    const auto& s = node.state_as<ScatterAddState>();
    const T* dy = node.grad_as<const T>();
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      layout::copy_run<true>(dy, d, node.shape.numel());
    }
    if (T* d = tape.input_grad<T>(node, 1).to_add()) {
      for_each_indexed(s.index.shape, node.shape, s.dim, s.index.values,
                       [&](int64_t p, int64_t at) { d[p] += dy[at]; });
    }
  });
}

void scatter_add_grad_graph(GradGraph& g) {
  // dX += dY; dS += gather(dY, dim, index)
  const auto& s = g.state<ScatterAddState>();
  const int dim = s.dim;
  const Ids index = to_ids(s.index);
  if (g.needs(0)) g.add(0, g.grad());
  if (g.needs(1)) g.add(1, gather(g.grad(), dim, index));
}

const OpDef kScatterAdd{.name = "scatter_add",
                        .backward = scatter_add_backward,
                        .arguments =
                            [](const Tape&, const Node& n) {
                              return dim_text(n.state_as<ScatterAddState>().dim, n.shape.rank());
                            },
                        .state_bytes =
                            [](const Tape&, const Node& n) {
                              return n.state_as<ScatterAddState>().index.shape.numel() *
                                     int64_t{sizeof(int64_t)};
                            },
                        .grad_graph = scatter_add_grad_graph};
TAPEGRAD_REGISTER_OP(kScatterAdd);

}  // namespace

Tensor scatter_add(const Tensor& x, int dim, const Ids& index, const Tensor& src) {
  const int d = layout::checked_dim("scatter_add", "x", x, dim);
  check_gather_shapes("scatter_add", x, d, index, &src);
  check_index_values("scatter_add", x, index, dim, indexed_size(x, d));
  const SavedIndex saved = save_index(x.tape(), index);
  // Only src's first index.shape elements per dim are read (see scatter).
  Tensor s = src;
  for (int k = 0; k < index.rank(); ++k) {
    if (s.shape()[k] != index.shape()[k]) s = narrow(s, k, 0, index.shape()[k]);
  }
  Tensor y = x.tape().record(kScatterAdd, x.shape(), x.dtype(), {x, s}, ScatterAddState{d, saved});
  dispatch(y.dtype(), [&]<class T>() {
    T* yv = output_data<T>(y);
    const T* sv = s.data<T>();
    layout::copy_run<false>(x.data<T>(), yv, x.numel());
    for_each_indexed(saved.shape, x.shape(), d, saved.values,
                     [&](int64_t p, int64_t at) { yv[at] += sv[p]; });
  });
  return y;
}

}  // namespace tapegrad
