// min_dim: the minimum along one dim (the values of torch.min(x, dim, keepdim)).
#include <cmath>

#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dim.h>
#include <tapegrad/ops/detail/reduce_rows.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct MinDimState {
  DimView view;
  int dim;
  const int64_t* argmin;  // per output element, from the tape's arena
};

void min_dim_backward(Tape& tape, const Node& node) {
  // Y = min_dim X  =>  dX[.., argmin, ..] += dY (one element per output: the first minimum)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* dy = node.grad_as<T>();
    const auto& [v, dim, argmin] = node.state_as<MinDimState>();
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t out = o * v.inner + i;
        dx[(o * v.size + argmin[out]) * v.inner + i] += dy[out];
      }
    }
  });
}

void min_dim_grad_graph(GradGraph& g) {
  // Y = min_dim X  =>  dX[.., argmin, ..] += dY (the index torch returns)
  const MinDimState s = g.state<MinDimState>();
  const Tensor x = g.input(0);
  const Shape shape = x.shape();
  const Tensor dy = expand(keepdim_view(g.grad(), shape, s.dim), shape);
  g.add(0, mul(dy, one_hot_along(shape, s.dim, s.argmin, x.dtype())));
}

const OpDef kMinDim{
    .name = "min_dim",
    .backward = min_dim_backward,
    .arguments =
        [](const Tape& t, const Node& n) {
          return reduction_text(n.state_as<MinDimState>().dim, t.input(n, 0), n);
        },
    .state_bytes = [](const Tape&,
                      const Node& n) { return n.shape.numel() * int64_t{sizeof(int64_t)}; },
    .grad_graph = min_dim_grad_graph};
TAPEGRAD_REGISTER_OP(kMinDim);

}  // namespace

Tensor min(const Tensor& x, int dim, bool keepdim) {
  const DimReduction r = plan_dim_reduction("min_dim", x, dim, keepdim);
  if (r.view.size == 0) {
    throw_unary_error("min_dim", x,
                      "cannot take the min along dim " + std::to_string(dim) + " of size 0");
  }
  auto* argmin = x.tape().arena().allocate_array<int64_t>(r.out_shape.numel());
  Tensor y =
      x.tape().record(kMinDim, r.out_shape, x.dtype(), {x}, MinDimState{r.view, r.dim, argmin});
  dispatch(y.dtype(), [&]<class T>() {
    T* out = output_data<T>(y);
    const T* in = x.data<T>();
    if (r.view.inner == 1) {
      for (int64_t o = 0; o < r.view.outer; ++o) {
        const T* row = in + o * r.view.size;
        argmin[o] = row_extreme_index<false>(row, r.view.size);
        out[o] = row[argmin[o]];
      }
      return;
    }
    for_each_reduced(r.view, [&](int64_t o, int64_t i, int64_t k) {
      // Strictly less keeps the first minimum on ties; a NaN wins and stays, as in torch.
      if (k == 0 || in[i] < out[o] || (std::isnan(in[i]) && !std::isnan(out[o]))) {
        out[o] = in[i];
        argmin[o] = k;
      }
    });
  });
  return y;
}

}  // namespace tapegrad
