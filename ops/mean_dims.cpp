// mean_dims: the mean over a list of dims (torch.mean(x, dims, keepdim); an empty list: all).
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dims.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct MeanDimsState {
  ReducedDims dims;
};

void mean_dims_backward(Tape& tape, const Node& node) {
  // Y = Σ_dims X / n  =>  dX += dY / n broadcast over the reduced dims (n: elements per output)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* dy = node.grad_as<T>();
    const Shape& shape = tape.input(node, 0).shape;
    const DimsReduction r = replan_dims_reduction(shape, node.state_as<MeanDimsState>().dims);
    const T n = static_cast<T>(r.group);  // divided, not times 1/n: torch's rounding
    for_each_in_reduction(shape, r.dims.mask, [&](int64_t o, int64_t i) { dx[i] += dy[o] / n; });
  });
}

void mean_dims_grad_graph(GradGraph& g) {
  // Y = Σ_dims X / n  =>  dX += dY / n broadcast over the reduced dims
  const Shape shape = g.input(0).shape();
  const DimsReduction r = replan_dims_reduction(shape, g.state<MeanDimsState>().dims);
  g.add(0,
        div_scalar(expand(kept_view(g.grad(), r.kept_shape), shape), static_cast<double>(r.group)));
}

const OpDef kMeanDims{.name = "mean_dims",
                      .backward = mean_dims_backward,
                      .arguments =
                          [](const Tape& t, const Node& n) {
                            return reduced_dims_text(t.input(n, 0),
                                                     n.state_as<MeanDimsState>().dims);
                          },
                      .grad_graph = mean_dims_grad_graph};
TAPEGRAD_REGISTER_OP(kMeanDims);

}  // namespace

Tensor mean(const Tensor& x, std::span<const int> dims, bool keepdim) {
  const DimsReduction r = plan_dims_reduction("mean_dims", x, dims, keepdim);
  Tensor y = x.tape().record(kMeanDims, r.out_shape, x.dtype(), {x}, MeanDimsState{r.dims});
  // Divided by n as torch does; an empty group gives 0/0 = NaN, as in torch.
  dispatch(y.dtype(), [&]<class T>() {
    sum_over<T>(y.tape().arena(), x.shape(), r.dims.mask, y.numel(), x.data<T>(), output_data<T>(y),
                static_cast<double>(r.group));
  });
  return y;
}

}  // namespace tapegrad
