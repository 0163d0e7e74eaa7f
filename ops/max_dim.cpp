// max_dim: the maximum along one dim (the values of torch.max(x, dim, keepdim)).
#include <cmath>

#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dim.h>
#include <tapegrad/ops/detail/reduce_rows.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct MaxDimState {
  DimView view;
  int dim;
  const int64_t* argmax;  // per output element, from the tape's arena
};

void max_dim_backward(Tape& tape, const Node& node) {
  // Y = max_dim X  =>  dX[.., argmax, ..] += dY (one element per output: the first maximum)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* dy = node.grad_as<T>();
    const auto& [v, dim, argmax] = node.state_as<MaxDimState>();
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t out = o * v.inner + i;
        dx[(o * v.size + argmax[out]) * v.inner + i] += dy[out];
      }
    }
  });
}

void max_dim_grad_graph(GradGraph& g) {
  // Y = max_dim X  =>  dX[.., argmax, ..] += dY (the index torch returns)
  const MaxDimState s = g.state<MaxDimState>();
  const Tensor x = g.input(0);
  const Shape shape = x.shape();
  const Tensor dy = expand(keepdim_view(g.grad(), shape, s.dim), shape);
  g.add(0, mul(dy, one_hot_along(shape, s.dim, s.argmax, x.dtype())));
}

const OpDef kMaxDim{
    .name = "max_dim",
    .backward = max_dim_backward,
    .arguments =
        [](const Tape& t, const Node& n) {
          return reduction_text(n.state_as<MaxDimState>().dim, t.input(n, 0), n);
        },
    .state_bytes = [](const Tape&,
                      const Node& n) { return n.shape.numel() * int64_t{sizeof(int64_t)}; },
    .grad_graph = max_dim_grad_graph};
TAPEGRAD_REGISTER_OP(kMaxDim);

}  // namespace

Tensor max(const Tensor& x, int dim, bool keepdim) {
  const DimReduction r = plan_dim_reduction("max_dim", x, dim, keepdim);
  if (r.view.size == 0) {
    throw_unary_error("max_dim", x,
                      "cannot take the max along dim " + std::to_string(dim) + " of size 0");
  }
  auto* argmax = x.tape().arena().allocate_array<int64_t>(r.out_shape.numel());
  Tensor y =
      x.tape().record(kMaxDim, r.out_shape, x.dtype(), {x}, MaxDimState{r.view, r.dim, argmax});
  dispatch(y.dtype(), [&]<class T>() {
    T* out = output_data<T>(y);
    const T* in = x.data<T>();
    if (r.view.inner == 1) {
      for (int64_t o = 0; o < r.view.outer; ++o) {
        const T* row = in + o * r.view.size;
        argmax[o] = row_extreme_index<true>(row, r.view.size);
        out[o] = row[argmax[o]];
      }
      return;
    }
    for_each_reduced(r.view, [&](int64_t o, int64_t i, int64_t k) {
      // Strictly greater keeps the first maximum on ties; a NaN wins and stays, as in torch.
      if (k == 0 || in[i] > out[o] || (std::isnan(in[i]) && !std::isnan(out[o]))) {
        out[o] = in[i];
        argmax[o] = k;
      }
    });
  });
  return y;
}

}  // namespace tapegrad
