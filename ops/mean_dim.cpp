// mean_dim: the mean along one dim (torch.mean(x, dim, keepdim)).
#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dim.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct MeanDimState {
  DimView view;
  int dim;
};

void mean_dim_backward(Tape& tape, const Node& node) {
  // Y = Σ_dim X / n  =>  dX += dY / n broadcast along dim (n = size of dim)
  dispatch(node.dtype, [&]<class T>() {
    const InputGrad<T> g = tape.input_grad<T>(node, 0);
    if (g.data == nullptr) return;
    const T* dy = node.grad_as<T>();
    const DimView v = node.state_as<MeanDimState>().view;
    const T n = static_cast<T>(v.size);  // divided, not times 1/n: torch's rounding
    spread_back(v, g, [&](int64_t o) { return dy[o] / n; });
  });
}

void mean_dim_grad_graph(GradGraph& g) {
  // Y = mean_dim X  =>  dX += dY / n broadcast along dim
  const Tensor x = g.input(0);
  const int dim = g.state<MeanDimState>().dim;
  const Shape shape = x.shape();
  g.add(0, div_scalar(expand(keepdim_view(g.grad(), shape, dim), shape),
                      static_cast<double>(shape[dim])));
}

const OpDef kMeanDim{.name = "mean_dim",
                     .backward = mean_dim_backward,
                     .arguments =
                         [](const Tape& t, const Node& n) {
                           return reduction_text(n.state_as<MeanDimState>().dim, t.input(n, 0), n);
                         },
                     .grad_graph = mean_dim_grad_graph};
TAPEGRAD_REGISTER_OP(kMeanDim);

}  // namespace

Tensor mean(const Tensor& x, int dim, bool keepdim) {
  const DimReduction r = plan_dim_reduction("mean_dim", x, dim, keepdim);
  Tensor y = x.tape().record(kMeanDim, r.out_shape, x.dtype(), {x}, MeanDimState{r.view, r.dim});
  // Divided by n, not multiplied by 1/n, as torch does; an empty dim gives NaN, as in torch.
  dispatch(y.dtype(), [&]<class T>() {
    sum_along<T>(y.tape().arena(), r.view, x.data<T>(), output_data<T>(y),
                 static_cast<double>(r.view.size));
  });
  return y;
}

}  // namespace tapegrad
