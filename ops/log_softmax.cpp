// log_softmax: x − max − log Σ exp(x − max) along one dim, torch.log_softmax.
//
// The order of operations is torch's CPU kernel's (_vec_log_softmax_lastdim): the max, then the
// sum of exp(x − max) in the tensor's dtype, then its log, then (x − max) − log_sum, subtracting
// the max first so a large x and a small difference keep their precision. torch vectorises exp
// (SLEEF) and sums in vector lanes, so float32 results can differ from torch's in the last bits.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dim.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct LogSoftmaxState {
  int dim;  // normalised to 0..rank-1
  DimView view;
};

void log_softmax_backward(Tape& tape, const Node& node) {
  // Y = X − logΣexp(X) along dim  =>  dX += dY − exp(Y) ⊙ Σ_dim dY   (reads only the output)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const DimView v = node.state_as<LogSoftmaxState>().view;
    const T* y = node.value_as<const T>();
    const T* dy = node.grad_as<const T>();
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t base = o * v.size * v.inner + i;
        T s = T(0);
        for (int64_t k = 0; k < v.size; ++k) s += dy[base + k * v.inner];
        for (int64_t k = 0; k < v.size; ++k) {
          const int64_t at = base + k * v.inner;
          dx[at] += dy[at] - std::exp(y[at]) * s;
        }
      }
    }
  });
}

void log_softmax_grad_graph(GradGraph& g) {
  // Y = log_softmax(X) along dim  =>  dX += dY − exp(Y) ⊙ Σ_dim dY
  const int dim = g.state<LogSoftmaxState>().dim;
  g.add(0, g.grad() - mul(exp(g.output()), sum(g.grad(), dim, true)));
}

const OpDef kLogSoftmax{.name = "log_softmax",
                        .backward = log_softmax_backward,
                        .arguments =
                            [](const Tape&, const Node& n) {
                              return "dim " + std::to_string(n.state_as<LogSoftmaxState>().dim);
                            },
                        .saves = saves::kOutput,
                        .grad_graph = log_softmax_grad_graph};
TAPEGRAD_REGISTER_OP(kLogSoftmax);

}  // namespace

Tensor log_softmax(const Tensor& x, int dim) {
  const DimReduction r = plan_dim_reduction("log_softmax", x, dim, true);
  const DimView v = r.view;
  Tensor y = x.tape().record(kLogSoftmax, x.shape(), x.dtype(), {x}, LogSoftmaxState{r.dim, v});
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t base = o * v.size * v.inner + i;
        T m = xv[base];
        for (int64_t k = 1; k < v.size; ++k) {
          const T e = xv[base + k * v.inner];
          if (e > m || std::isnan(e)) m = e;  // a NaN anywhere makes the row NaN
        }
        T s = T(0);
        for (int64_t k = 0; k < v.size; ++k) s += std::exp(xv[base + k * v.inner] - m);
        const T log_sum = std::log(s);
        for (int64_t k = 0; k < v.size; ++k) {
          const int64_t at = base + k * v.inner;
          yv[at] = xv[at] - m - log_sum;
        }
      }
    }
  });
  return y;
}

}  // namespace tapegrad
