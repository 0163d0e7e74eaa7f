// norm: the vector p-norm over a list of dims for p = 1, 2 or inf (torch.norm(x, p, dim,
// keepdim)), with torch's gradients at 0 and at ties.
#include <cmath>
#include <limits>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dims.h>
#include <tapegrad/ops/detail/reduce_rows.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct NormState {
  ReducedDims dims;
  double p;
};

// torch's sgn for real numbers: -1, 0 or 1, and 0 for NaN.
template <class T>
T sgn(T x) {
  return static_cast<T>((x > T(0)) - (x < T(0)));
}

// For p = inf: whether |x| is one of the maxima the gradient goes to (or NaN, torch's mask).
template <class T>
bool at_max(T x, T y) {
  return std::abs(x) == y || std::isnan(x);
}

void norm_backward(Tape& tape, const Node& node) {
  // p = 1: dX += sgn(X) ⊙ dY;  p = 2: dX += dY ⊙ where(Y = 0, 0, X / Y);
  // p = inf: dX += sgn(X) ⊙ (dY / Σ M) ⊙ M, M = [|X| = Y or X is NaN]  (all broadcast over dims)
  dispatch(node.dtype, [&]<class T>() {
    const auto [dx, xv, yv, dy] = unary_grad<T>(tape, node);
    if (dx == nullptr) return;
    const Node& x = tape.input(node, 0);
    const NormState& st = node.state_as<NormState>();
    const uint32_t mask = st.dims.mask;
    const int64_t n_out = node.shape.numel();
    if (st.p != std::numeric_limits<double>::infinity() && n_out > 0 &&
        reduces_last_dims(x.shape, mask)) {
      const int64_t group = x.shape.numel() / n_out;
      for (int64_t o = 0; o < n_out; ++o) {
        const T* row = xv + o * group;
        T* drow = dx + o * group;
        const T d = dy[o], y = yv[o];
        if (st.p == 1.0) {
          for (int64_t k = 0; k < group; ++k) drow[k] += sgn(row[k]) * d;
        } else {
          for (int64_t k = 0; k < group; ++k) drow[k] += d * (y == T(0) ? T(0) : row[k] / y);
        }
      }
      return;
    }
    if (st.p == 1.0) {
      for_each_in_reduction(x.shape, mask,
                            [&](int64_t o, int64_t i) { dx[i] += sgn(xv[i]) * dy[o]; });
    } else if (st.p == 2.0) {
      for_each_in_reduction(x.shape, mask, [&](int64_t o, int64_t i) {
        dx[i] += dy[o] * (yv[o] == T(0) ? T(0) : xv[i] / yv[o]);
      });
    } else {
      T* count = tape.arena().allocate_array<T>(n_out);
      for (int64_t o = 0; o < n_out; ++o) count[o] = T(0);
      for_each_in_reduction(x.shape, mask,
                            [&](int64_t o, int64_t i) { count[o] += at_max(xv[i], yv[o]); });
      for_each_in_reduction(x.shape, mask, [&](int64_t o, int64_t i) {
        dx[i] += sgn(xv[i]) * ((dy[o] / count[o]) * static_cast<T>(at_max(xv[i], yv[o])));
      });
    }
  });
}

void norm_grad_graph(GradGraph& g) {
  // The same formulas with ops; sgn(X) and the masks are constants (zero derivative)
  const NormState st = g.state<NormState>();
  const Tensor x = g.input(0);
  const Shape shape = x.shape();
  const DimsReduction r = replan_dims_reduction(shape, st.dims);
  const Tensor dy = kept_view(g.grad(), r.kept_shape);
  if (st.p == 1.0) {
    g.add(0, mul(sign(x), expand(dy, shape)));
  } else if (st.p == 2.0) {
    const Tensor y = kept_view(g.output(), r.kept_shape);
    g.add(0, mul(expand(dy, shape), masked_fill(div(x, expand(y, shape)), eq(y, 0.0), 0.0)));
  } else {
    const std::vector<double> xs = x.values();
    const Tensor y = kept_view(g.output(), r.kept_shape);
    const std::vector<double> ys = y.values();
    std::vector<double> picks(xs.size());
    for_each_in_reduction(shape, st.dims.mask, [&](int64_t o, int64_t i) {
      picks[static_cast<size_t>(i)] =
          at_max(xs[static_cast<size_t>(i)], ys[static_cast<size_t>(o)]);
    });
    const Tensor m = from_values(shape, picks, x.dtype());
    const Tensor count = sum(m, reduced_dims_list(r.dims, shape.rank()), true);
    g.add(0, mul(sign(x), mul(expand(div(dy, count), shape), m)));
  }
}

const OpDef kNorm{.name = "norm",
                  .backward = norm_backward,
                  .arguments =
                      [](const Tape& t, const Node& n) {
                        const NormState& s = n.state_as<NormState>();
                        return "p = " + number_text(s.p) + ", " +
                               reduced_dims_text(t.input(n, 0), s.dims);
                      },
                  .saves = saves::kInput0 | saves::kOutput,
                  .grad_graph = norm_grad_graph};
TAPEGRAD_REGISTER_OP(kNorm);

}  // namespace

Tensor norm(const Tensor& x, double p, std::span<const int> dims, bool keepdim) {
  if (p != 1.0 && p != 2.0 && p != std::numeric_limits<double>::infinity()) {
    throw_unary_error("norm", x, "p = " + number_text(p) + " is not supported (1, 2 or inf)");
  }
  const DimsReduction r = plan_dims_reduction("norm", x, dims, keepdim);
  Tensor y = x.tape().record(kNorm, r.out_shape, x.dtype(), {x}, NormState{r.dims, p});
  dispatch(y.dtype(), [&]<class T>() {
    const int64_t n_out = y.numel();
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    double* acc = y.tape().arena().allocate_array<double>(n_out);
    for (int64_t o = 0; o < n_out; ++o) acc[o] = 0.0;  // an empty group's norm is 0
    const bool rows = n_out > 0 && r.group > 0 && reduces_last_dims(x.shape(), r.dims.mask);
    if (rows && p == 1.0) {
      for (int64_t o = 0; o < n_out; ++o) {
        acc[o] = row_sum_of(in + o * r.group, r.group, [](double v) { return std::abs(v); });
      }
    } else if (rows && p == 2.0) {
      for (int64_t o = 0; o < n_out; ++o) {
        acc[o] = std::sqrt(row_sum_of(in + o * r.group, r.group, [](double v) { return v * v; }));
      }
    } else if (p == 1.0) {
      for_each_in_reduction(x.shape(), r.dims.mask, [&](int64_t o, int64_t i) {
        acc[o] += std::abs(static_cast<double>(in[i]));
      });
    } else if (p == 2.0) {
      for_each_in_reduction(x.shape(), r.dims.mask, [&](int64_t o, int64_t i) {
        acc[o] += static_cast<double>(in[i]) * static_cast<double>(in[i]);
      });
      for (int64_t o = 0; o < n_out; ++o) acc[o] = std::sqrt(acc[o]);
    } else {
      for_each_in_reduction(x.shape(), r.dims.mask, [&](int64_t o, int64_t i) {
        const double a = std::abs(static_cast<double>(in[i]));
        if (a > acc[o] || std::isnan(a)) acc[o] = a;
      });
    }
    for (int64_t o = 0; o < n_out; ++o) out[o] = static_cast<T>(acc[o]);
  });
  return y;
}

}  // namespace tapegrad
