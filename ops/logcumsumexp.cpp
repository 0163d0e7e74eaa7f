// logcumsumexp: the running log Σ exp along a dim (torch.logcumsumexp), accumulated in double as
// torch's CPU kernel, with its handling of ±inf and NaN.
#include <algorithm>
#include <cmath>
#include <limits>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dim.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct LogcumsumexpState {
  int dim;  // normalised to 0..rank-1 (0 for a scalar)
  DimView view;
};

// ln(eˣ + eʸ) as torch 1.13's _log_add_exp_helper (y the running value): NaN propagates, and two
// equal infinities give x (so −inf stays −inf and +inf stays +inf, not NaN).
double logcumsumexp_add(double x, double y) {
  const double lo = std::isnan(y) ? y : std::min(x, y);
  const double hi = std::isnan(y) ? y : std::max(x, y);
  if (lo != hi || std::isfinite(lo)) return std::log1p(std::exp(lo - hi)) + hi;
  return x;
}

// out_k = ln Σ_{j≤k} exp(x_j), in double, each output rounded to T.
template <class T>
void logcumsumexp_rows(const DimView& v, const T* x, T* out) {
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      const int64_t base = o * v.size * v.inner + i;
      double acc = -std::numeric_limits<double>::infinity();
      for (int64_t s = 0; s < v.size; ++s) {
        const int64_t at = base + s * v.inner;
        acc = logcumsumexp_add(static_cast<double>(x[at]), acc);
        out[at] = static_cast<T>(acc);
      }
    }
  }
}

void logcumsumexp_backward(Tape& tape, const Node& node) {
  // Y_k = ln Σ_{j≤k} e^{X_j}  =>  dX_k += Σ_{j≥k} dY_j e^{X_k − Y_j}, as torch's
  // logcumsumexp_backward: exp(rlcse(ln dY⁺ − Y) + X) − exp(rlcse(ln dY⁻ − Y) + X), rlcse the
  // reversed logcumsumexp and ln dY^± the lowest finite value where dY has the other sign
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const DimView v = node.state_as<LogcumsumexpState>().view;
    const T* x = tape.input(node, 0).value_as<const T>();
    const T* y = node.value_as<const T>();
    const T* dy = node.grad_as<const T>();
    if (node.shape.rank() == 0) {
      dx[0] += dy[0];
      return;
    }
    const double lowest = static_cast<double>(std::numeric_limits<T>::lowest());
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t base = o * v.size * v.inner + i;
        double pos = -std::numeric_limits<double>::infinity(), neg = pos;
        for (int64_t k = v.size - 1; k >= 0; --k) {
          const int64_t at = base + k * v.inner;
          const double g = static_cast<double>(dy[at]), lg = std::log(std::abs(g));
          pos = logcumsumexp_add((g > 0 ? lg : lowest) - static_cast<double>(y[at]), pos);
          neg = logcumsumexp_add((g < 0 ? lg : lowest) - static_cast<double>(y[at]), neg);
          const double xk = static_cast<double>(x[at]);
          dx[at] += static_cast<T>(std::exp(pos + xk) - std::exp(neg + xk));
        }
      }
    }
  });
}

void logcumsumexp_grad_graph(GradGraph& g) {
  // dX += exp(rlcse(L⁺ − Y) + X) − exp(rlcse(L⁻ − Y) + X), L^± = ln|dY| where dY > 0 (< 0), else
  // the lowest finite value; rlcse = flip ∘ logcumsumexp ∘ flip along dim (torch's formula)
  const Shape shape = g.input(0).shape();
  const int dim = g.state<LogcumsumexpState>().dim;
  if (shape.rank() == 0 || shape.numel() == 0) {
    g.add(0, g.grad());
    return;
  }
  const Tensor dy = g.grad(), x = g.input(0), y = g.output();
  const double lowest = dy.dtype() == DType::Float32
                            ? static_cast<double>(std::numeric_limits<float>::lowest())
                            : std::numeric_limits<double>::lowest();
  const Tensor log_abs = log(abs(dy));
  const Tensor log_pos = masked_fill(log_abs, logical_not(gt(dy, 0.0)), lowest);
  const Tensor log_neg = masked_fill(log_abs, logical_not(lt(dy, 0.0)), lowest);
  const std::initializer_list<int64_t> dims{dim};
  const auto reversed = [&](const Tensor& t) {
    return flip(logcumsumexp(flip(t, dims), dim), dims);
  };
  g.add(0, sub(exp(add(reversed(sub(log_pos, y)), x)), exp(add(reversed(sub(log_neg, y)), x))));
}

const OpDef kLogcumsumexp{.name = "logcumsumexp",
                          .backward = logcumsumexp_backward,
                          .arguments =
                              [](const Tape& t, const Node& n) {
                                return dim_text(n.state_as<LogcumsumexpState>().dim,
                                                t.input(n, 0).shape.rank());
                              },
                          .saves = saves::kInput0 | saves::kOutput,
                          .grad_graph = logcumsumexp_grad_graph};
TAPEGRAD_REGISTER_OP(kLogcumsumexp);

}  // namespace

Tensor logcumsumexp(const Tensor& x, int dim) {
  const DimReduction r = plan_dim_reduction("logcumsumexp", x, dim, true);
  Tensor y =
      x.tape().record(kLogcumsumexp, x.shape(), x.dtype(), {x}, LogcumsumexpState{r.dim, r.view});
  dispatch(y.dtype(),
           [&]<class T>() { logcumsumexp_rows<T>(r.view, x.data<T>(), output_data<T>(y)); });
  return y;
}

}  // namespace tapegrad
