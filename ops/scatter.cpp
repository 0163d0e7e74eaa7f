// scatter: x with src's elements (or one value) written at an index along one dim
// (torch.scatter); where two positions of index name one element, which write wins is torch's
// "undefined": here the last in index's row-major order.
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/index_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct ScatterState {
  int dim;  // normalised to 0..rank-1
  SavedIndex index;
  bool has_src;  // else every indexed element gets `value`
  double value;
};

void scatter_backward(Tape& tape, const Node& node) {
  // Y = X with Y[p with p_dim = index[p]] = S[p]  =>  dX += dY zeroed where written;
  // dS[p] += dY[p with p_dim = index[p]] (torch's gather, every p even where another wrote last)
  dispatch(node.dtype, [&]<class T>() {
    const auto& s = node.state_as<ScatterState>();
    const T* dy = node.grad_as<const T>();
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      std::vector<bool> written(static_cast<size_t>(node.shape.numel()));
      for_each_indexed(s.index.shape, node.shape, s.dim, s.index.values,
                       [&](int64_t, int64_t at) { written[static_cast<size_t>(at)] = true; });
      for (int64_t i = 0; i < node.shape.numel(); ++i) {
        if (!written[static_cast<size_t>(i)]) d[i] += dy[i];
      }
    }
    if (!s.has_src) return;
    if (T* d = tape.input_grad<T>(node, 1).to_add()) {
      for_each_indexed(s.index.shape, node.shape, s.dim, s.index.values,
                       [&](int64_t p, int64_t at) { d[p] += dy[at]; });
    }
  });
}

void scatter_grad_graph(GradGraph& g) {
  // dX += scatter(dY, dim, index, 0); dS += gather(dY, dim, index)
  const auto& s = g.state<ScatterState>();
  const int dim = s.dim;
  const bool has_src = s.has_src;
  const Ids index = to_ids(s.index);
  if (g.needs(0)) g.add(0, scatter(g.grad(), dim, index, 0.0));
  if (has_src && g.needs(1)) g.add(1, gather(g.grad(), dim, index));
}

const OpDef kScatter{.name = "scatter",
                     .backward = scatter_backward,
                     .arguments =
                         [](const Tape&, const Node& n) {
                           const auto& s = n.state_as<ScatterState>();
                           return dim_text(s.dim, n.shape.rank()) +
                                  (s.has_src ? std::string() : ", value " + number_text(s.value));
                         },
                     .state_bytes =
                         [](const Tape&, const Node& n) {
                           return n.state_as<ScatterState>().index.shape.numel() *
                                  int64_t{sizeof(int64_t)};
                         },
                     .grad_graph = scatter_grad_graph};
TAPEGRAD_REGISTER_OP(kScatter);

Tensor scatter_impl(const Tensor& x, int dim, const Ids& index, const Tensor* src, double value) {
  const int d = layout::checked_dim("scatter", "x", x, dim);
  check_gather_shapes("scatter", x, d, index, src);
  check_index_values("scatter", x, index, dim, indexed_size(x, d));
  const SavedIndex saved = save_index(x.tape(), index);
  const ScatterState state{d, saved, src != nullptr, value};
  // Only src's first index.shape elements per dim are read: src cut to them, so its gradient
  // (zero elsewhere) is narrow's.
  Tensor s = src != nullptr ? *src : Tensor();
  for (int k = 0; src != nullptr && k < index.rank(); ++k) {
    if (s.shape()[k] != index.shape()[k]) s = narrow(s, k, 0, index.shape()[k]);
  }
  Tensor y = src != nullptr ? x.tape().record(kScatter, x.shape(), x.dtype(), {x, s}, state)
                            : x.tape().record(kScatter, x.shape(), x.dtype(), {x}, state);
  dispatch(y.dtype(), [&]<class T>() {
    T* yv = output_data<T>(y);
    layout::copy_run<false>(x.data<T>(), yv, x.numel());
    if (src != nullptr) {
      const T* sv = s.data<T>();
      for_each_indexed(saved.shape, x.shape(), d, saved.values,
                       [&](int64_t p, int64_t at) { yv[at] = sv[p]; });
    } else {
      const T v = static_cast<T>(value);
      for_each_indexed(saved.shape, x.shape(), d, saved.values,
                       [&](int64_t, int64_t at) { yv[at] = v; });
    }
  });
  return y;
}

}  // namespace

Tensor scatter(const Tensor& x, int dim, const Ids& index, const Tensor& src) {
  return scatter_impl(x, dim, index, &src, 0.0);
}

Tensor scatter(const Tensor& x, int dim, const Ids& index, double value) {
  return scatter_impl(x, dim, index, nullptr, value);
}

}  // namespace tapegrad
