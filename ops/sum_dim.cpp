// sum_dim: the sum along one dim (torch.sum(x, dim, keepdim)).
#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dim.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct SumDimState {
  DimView view;
  int dim;
};

void sum_dim_backward(Tape& tape, const Node& node) {
  // Y = Σ_dim X  =>  dX += dY broadcast along dim
  dispatch(node.dtype, [&]<class T>() {
    const InputGrad<T> g = tape.input_grad<T>(node, 0);
    if (g.data == nullptr) return;
    const T* dy = node.grad_as<T>();
    const DimView v = node.state_as<SumDimState>().view;
    spread_back(v, g, [&](int64_t o) { return dy[o]; });
  });
}

void sum_dim_grad_graph(GradGraph& g) {
  // Y = Σ_dim X  =>  dX += dY broadcast along dim
  const Tensor x = g.input(0);
  const Shape shape = x.shape();
  g.add(0, expand(keepdim_view(g.grad(), shape, g.state<SumDimState>().dim), shape));
}

const OpDef kSumDim{.name = "sum_dim",
                    .backward = sum_dim_backward,
                    .arguments =
                        [](const Tape& t, const Node& n) {
                          return reduction_text(n.state_as<SumDimState>().dim, t.input(n, 0), n);
                        },
                    .grad_graph = sum_dim_grad_graph};
TAPEGRAD_REGISTER_OP(kSumDim);

}  // namespace

Tensor sum(const Tensor& x, int dim, bool keepdim) {
  const DimReduction r = plan_dim_reduction("sum_dim", x, dim, keepdim);
  Tensor y = x.tape().record(kSumDim, r.out_shape, x.dtype(), {x}, SumDimState{r.view, r.dim});
  dispatch(y.dtype(), [&]<class T>() {
    sum_along<T>(y.tape().arena(), r.view, x.data<T>(), output_data<T>(y), 1.0);
  });
  return y;
}

}  // namespace tapegrad
