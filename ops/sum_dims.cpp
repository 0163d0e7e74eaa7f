// sum_dims: the sum over a list of dims (torch.sum(x, dims, keepdim); an empty list sums all).
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dims.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct SumDimsState {
  ReducedDims dims;
};

void sum_dims_backward(Tape& tape, const Node& node) {
  // Y = Σ_dims X  =>  dX += dY broadcast over the reduced dims
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* dy = node.grad_as<T>();
    for_each_in_reduction(tape.input(node, 0).shape, node.state_as<SumDimsState>().dims.mask,
                          [&](int64_t o, int64_t i) { dx[i] += dy[o]; });
  });
}

void sum_dims_grad_graph(GradGraph& g) {
  // Y = Σ_dims X  =>  dX += dY broadcast over the reduced dims
  const Shape shape = g.input(0).shape();
  const DimsReduction r = replan_dims_reduction(shape, g.state<SumDimsState>().dims);
  g.add(0, expand(kept_view(g.grad(), r.kept_shape), shape));
}

const OpDef kSumDims{.name = "sum_dims",
                     .backward = sum_dims_backward,
                     .arguments =
                         [](const Tape& t, const Node& n) {
                           return reduced_dims_text(t.input(n, 0), n.state_as<SumDimsState>().dims);
                         },
                     .grad_graph = sum_dims_grad_graph};
TAPEGRAD_REGISTER_OP(kSumDims);

}  // namespace

Tensor sum(const Tensor& x, std::span<const int> dims, bool keepdim) {
  const DimsReduction r = plan_dims_reduction("sum_dims", x, dims, keepdim);
  Tensor y = x.tape().record(kSumDims, r.out_shape, x.dtype(), {x}, SumDimsState{r.dims});
  dispatch(y.dtype(), [&]<class T>() {
    sum_over<T>(y.tape().arena(), x.shape(), r.dims.mask, y.numel(), x.data<T>(), output_data<T>(y),
                1.0);
  });
  return y;
}

}  // namespace tapegrad
