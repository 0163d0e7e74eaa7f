// index_add: x plus alpha times source's slices added at the given indices along one dim
// (torch.index_add); repeated indices add up, in index order.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/index_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct IndexAddState {
  int dim;  // normalised to 0..rank-1 (0 for a 0-dim x)
  SavedIndex index;
  double alpha;
};

// The [outer, size, inner] view of x along dim (one element for a 0-dim x).
struct Slices {
  int64_t outer, size, inner;
};
Slices slices_of(const Shape& shape, int dim) {
  if (shape.rank() == 0) return {1, 1, 1};
  return {layout::outer_size(shape, dim), shape[dim], layout::inner_size(shape, dim)};
}

void index_add_backward(Tape& tape, const Node& node) {
  // Y = X; Y[.., index[i], ..] += α·S[.., i, ..]  =>  dX += dY; dS[.., i, ..] += α·dY[.., index[i],
  // ..]
  dispatch(node.dtype, [&]<class T>() {
    const auto& s = node.state_as<IndexAddState>();
    const T* dy = node.grad_as<const T>();
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      layout::copy_run<true>(dy, d, node.shape.numel());
    }
    if (T* d = tape.input_grad<T>(node, 1).to_add()) {
      const Slices v = slices_of(node.shape, s.dim);
      const int64_t n = s.index.shape.numel();
      const T alpha = static_cast<T>(s.alpha);
      for (int64_t o = 0; o < v.outer; ++o) {
        for (int64_t i = 0; i < n; ++i) {
          const T* from = dy + (o * v.size + s.index.values[i]) * v.inner;
          T* to = d + (o * n + i) * v.inner;
          if (s.alpha == 1.0) {
            layout::copy_run<true>(from, to, v.inner);
          } else {
            for (int64_t k = 0; k < v.inner; ++k) to[k] += from[k] * alpha;
          }
        }
      }
    }
  });
}

void index_add_grad_graph(GradGraph& g) {
  // dX += dY; dS += index_select(dY, dim, index)·α
  const auto& s = g.state<IndexAddState>();
  const int dim = s.dim;
  const double alpha = s.alpha;
  const Ids index = to_ids(s.index);
  const Shape source = g.input(1).shape();
  if (g.needs(0)) g.add(0, g.grad());
  if (g.needs(1)) {
    Tensor d = reshape(index_select(g.grad(), dim, index), source.dims());
    g.add(1, alpha == 1.0 ? d : scale(d, alpha));
  }
}

const OpDef kIndexAdd{
    .name = "index_add",
    .backward = index_add_backward,
    .arguments =
        [](const Tape&, const Node& n) {
          const auto& s = n.state_as<IndexAddState>();
          return dim_text(s.dim, n.shape.rank()) +
                 (s.alpha == 1.0 ? std::string() : ", alpha " + number_text(s.alpha));
        },
    .state_bytes =
        [](const Tape&, const Node& n) {
          return n.state_as<IndexAddState>().index.shape.numel() * int64_t{sizeof(int64_t)};
        },
    .grad_graph = index_add_grad_graph};
TAPEGRAD_REGISTER_OP(kIndexAdd);

}  // namespace

Tensor index_add(const Tensor& x, int dim, const Ids& index, const Tensor& source, double alpha) {
  const int d = layout::checked_dim("index_add", "x", x, dim);
  const std::string what = "index_add: " + describe("x", x) + ", " + index_text(index) + ", " +
                           describe("source", source) + ": ";
  if (source.dtype() != x.dtype()) {
    throw Error(what + "dtypes differ (" + dtype_name(x.dtype()) + " vs " +
                dtype_name(source.dtype()) + ")");
  }
  if (index.rank() > 1) throw Error(what + "index must be 0-dim or 1-dim");
  bool ok = source.rank() == x.rank() || (x.rank() <= 1 && source.rank() <= 1);
  const int64_t n = index.numel();
  for (int k = 0; ok && k < x.rank(); ++k) {
    const int64_t want = k == d ? n : x.shape()[k];
    ok = (source.rank() == 0 ? 1 : source.shape()[k]) == want;
  }
  if (x.rank() == 0) ok = ok && source.numel() == n;
  if (!ok) {
    throw Error(what + "source must be x's shape with dim " + std::to_string(dim) +
                " the number of indices (" + std::to_string(n) + ")");
  }
  const int64_t size = indexed_size(x, d);
  check_index_values("index_add", x, index, dim, size);
  const SavedIndex saved = save_index(x.tape(), index);
  Tensor y =
      x.tape().record(kIndexAdd, x.shape(), x.dtype(), {x, source}, IndexAddState{d, saved, alpha});
  dispatch(y.dtype(), [&]<class T>() {
    const Slices v = slices_of(x.shape(), d);
    const T* sv = source.data<T>();
    T* yv = output_data<T>(y);
    const T a = static_cast<T>(alpha);
    layout::copy_run<false>(x.data<T>(), yv, x.numel());
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < n; ++i) {
        T* to = yv + (o * v.size + saved.values[i]) * v.inner;
        const T* from = sv + (o * n + i) * v.inner;
        if (alpha == 1.0) {
          layout::copy_run<true>(from, to, v.inner);
        } else {
          for (int64_t k = 0; k < v.inner; ++k) to[k] += from[k] * a;
        }
      }
    }
  });
  return y;
}

}  // namespace tapegrad
