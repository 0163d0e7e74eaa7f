// cumsum: the running sum along a dim (torch.cumsum), summed in double as torch's CPU kernel.
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dim.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct CumsumState {
  DimView view;
  int dim;
};

// out[.., k, ..] = Σ_{j≤k} x[.., j, ..] (or Σ_{j≥k} when `reversed`), each row accumulated in
// double and every output rounded to T: torch's cumsum, and its backward's flip-cumsum-flip.
template <class T>
void running_sum(const DimView& v, const T* x, T* out, bool add, bool reversed) {
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      const int64_t base = o * v.size * v.inner + i;
      double acc = 0.0;
      for (int64_t s = 0; s < v.size; ++s) {
        const int64_t at = base + (reversed ? v.size - 1 - s : s) * v.inner;
        acc += static_cast<double>(x[at]);
        if (add) {
          out[at] += static_cast<T>(acc);
        } else {
          out[at] = static_cast<T>(acc);
        }
      }
    }
  }
}

void cumsum_backward(Tape& tape, const Node& node) {
  // Y_k = Σ_{j≤k} X_j  =>  dX_k += Σ_{j≥k} dY_j (torch's reversed cumsum)
  dispatch(node.dtype, [&]<class T>() {
    if (T* dx = tape.input_grad<T>(node, 0).to_add()) {
      running_sum<T>(node.state_as<CumsumState>().view, node.grad_as<const T>(), dx, true, true);
    }
  });
}

void cumsum_grad_graph(GradGraph& g) {
  // Y_k = Σ_{j≤k} X_j  =>  dX += Σ_dim dY − cumsum(dY) + dY (the reversed cumsum, with ops)
  const Shape shape = g.input(0).shape();
  const int dim = g.state<CumsumState>().dim;
  if (shape.rank() == 0) {
    g.add(0, g.grad());
    return;
  }
  const Tensor dy = g.grad();
  g.add(0, add(sub(expand(sum(dy, dim, true), shape), cumsum(dy, dim)), dy));
}

const OpDef kCumsum{.name = "cumsum",
                    .backward = cumsum_backward,
                    .arguments =
                        [](const Tape& t, const Node& n) {
                          return dim_text(n.state_as<CumsumState>().dim,
                                          t.input(n, 0).shape.rank());
                        },
                    .grad_graph = cumsum_grad_graph};
TAPEGRAD_REGISTER_OP(kCumsum);

}  // namespace

Tensor cumsum(const Tensor& x, int dim) {
  const DimReduction r = plan_dim_reduction("cumsum", x, dim, true);
  Tensor y = x.tape().record(kCumsum, x.shape(), x.dtype(), {x}, CumsumState{r.view, r.dim});
  dispatch(y.dtype(), [&]<class T>() {
    running_sum<T>(r.view, x.data<T>(), output_data<T>(y), false, false);
  });
  return y;
}

}  // namespace tapegrad
