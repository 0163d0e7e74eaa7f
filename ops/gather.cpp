// gather: x's elements picked along one dim by an index of x's rank (torch.gather).
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/index_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct GatherState {
  int dim;  // normalised to 0..rank-1
  SavedIndex index;
};

void gather_backward(Tape& tape, const Node& node) {
  // Y[p] = X[p with p_dim = index[p]]  =>  dX[p with p_dim = index[p]] += dY[p] (repeats add)
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      const auto& [dim, index] = node.state_as<GatherState>();
      const T* dy = node.grad_as<const T>();
      for_each_indexed(index.shape, x.shape, dim, index.values,
                       [&](int64_t p, int64_t at) { d[at] += dy[p]; });
    }
  });
}

void gather_grad_graph(GradGraph& g) {
  // Y = gather(X, dim, index)  =>  dX += scatter_add(zeros(X), dim, index, dY)
  const auto& s = g.state<GatherState>();
  const int dim = s.dim;
  const Ids index = to_ids(s.index);
  const Shape shape = g.input(0).shape();
  g.add(0, scatter_add(zeros(shape, g.grad().dtype()), dim, index, g.grad()));
}

const OpDef kGather{
    .name = "gather",
    .backward = gather_backward,
    .arguments =
        [](const Tape&, const Node& n) {
          return dim_text(n.state_as<GatherState>().dim, n.shape.rank());
        },
    .state_bytes = [](const Tape&,
                      const Node& n) { return n.shape.numel() * int64_t{sizeof(int64_t)}; },
    .grad_graph = gather_grad_graph};
TAPEGRAD_REGISTER_OP(kGather);

}  // namespace

Tensor gather(const Tensor& x, int dim, const Ids& index) {
  const int d = layout::checked_dim("gather", "x", x, dim);
  check_gather_shapes("gather", x, d, index, nullptr);
  check_index_values("gather", x, index, dim, indexed_size(x, d));
  const SavedIndex saved = save_index(x.tape(), index);
  Tensor y = x.tape().record(kGather, index.shape(), x.dtype(), {x}, GatherState{d, saved});
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    for_each_indexed(saved.shape, x.shape(), d, saved.values,
                     [&](int64_t p, int64_t at) { yv[p] = xv[at]; });
  });
  return y;
}

}  // namespace tapegrad
