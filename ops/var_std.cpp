// var and std over a list of dims with a correction (torch.var, torch.std), and var_mean /
// std_mean built from them and mean over the same dims.
#include <algorithm>
#include <cmath>
#include <limits>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dims.h>
#include <tapegrad/ops/detail/reduce_rows.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct VarState {
  ReducedDims dims;
  int64_t correction;
  bool all;  // no dims given (or a 0-D x): torch's backward then has its own n = correction case
};

std::string var_arguments(const Tape& t, const Node& n) {
  const VarState& s = n.state_as<VarState>();
  return reduced_dims_text(t.input(n, 0), s.dims) + ", correction " + std::to_string(s.correction);
}

// Group means of x, in double, then rounded to T as torch's self.mean(dims, true) is.
template <class T>
T* group_means(Arena& arena, const Shape& s, uint32_t mask, int64_t n_out, int64_t group,
               const T* x) {
  T* m = arena.allocate_array<T>(n_out);
  sum_over<T>(arena, s, mask, n_out, x, m, static_cast<double>(group));
  return m;
}

// dX += c·dY_b ⊙ (X − mean_b), c = 2 / (n − correction); with no dims and n = correction,
// dX += inf·dY (torch's var_backward). `dy` is var's output gradient, or std's turned into it.
template <class T>
void add_var_gradient(Tape& tape, const Node& node, const T* dy, T* dx) {
  const VarState& st = node.state_as<VarState>();
  const Node& x = tape.input(node, 0);
  const DimsReduction r = replan_dims_reduction(x.shape, st.dims);
  const int64_t n_out = node.shape.numel();
  if (st.all && r.group == st.correction) {
    for (int64_t i = 0; i < x.shape.numel(); ++i) {
      dx[i] += std::numeric_limits<T>::infinity() * dy[0];
    }
    return;
  }
  const T* xv = x.value_as<const T>();
  const T* m = group_means<T>(tape.arena(), x.shape, st.dims.mask, n_out, r.group, xv);
  const T c = static_cast<T>(2.0 / static_cast<double>(r.group - st.correction));
  if (reduces_last_dims(x.shape, st.dims.mask)) {
    for (int64_t o = 0; o < n_out; ++o) {
      const T* row = xv + o * r.group;
      T* drow = dx + o * r.group;
      const T cd = c * dy[o], mo = m[o];
      for (int64_t k = 0; k < r.group; ++k) drow[k] += cd * (row[k] - mo);
    }
    return;
  }
  for_each_in_reduction(x.shape, st.dims.mask,
                        [&](int64_t o, int64_t i) { dx[i] += (c * dy[o]) * (xv[i] - m[o]); });
}

// The same with ops, from var's output gradient dv.
Tensor var_gradient(GradGraph& g, const Tensor& dv) {
  const VarState st = g.state<VarState>();
  const Tensor x = g.input(0);
  const Shape shape = x.shape();
  const DimsReduction r = replan_dims_reduction(shape, st.dims);
  if (st.all && r.group == st.correction) {
    return scale(expand(dv, shape), std::numeric_limits<double>::infinity());
  }
  const double c = 2.0 / static_cast<double>(r.group - st.correction);
  const Tensor centred = sub(x, mean(x, reduced_dims_list(r.dims, shape.rank()), true));
  return mul(expand(scale(kept_view(dv, r.kept_shape), c), shape), centred);
}

void var_backward(Tape& tape, const Node& node) {
  // Y = Σ (X − X̄)² / (n − c)  =>  dX += (2 / (n − c))·dY ⊙ (X − X̄) (n = c with no dims: inf·dY)
  dispatch(node.dtype, [&]<class T>() {
    if (T* dx = tape.input_grad<T>(node, 0).to_add()) {
      add_var_gradient<T>(tape, node, node.grad_as<const T>(), dx);
    }
  });
}

void var_grad_graph(GradGraph& g) {
  // Y = Σ (X − X̄)² / (n − c)  =>  dX += (2 / (n − c))·dY ⊙ (X − mean(X)), the mean recorded
  g.add(0, var_gradient(g, g.grad()));
}

void std_backward(Tape& tape, const Node& node) {
  // Y = √var X  =>  dX += var's gradient for dV = where(Y = 0, 0, dY / (2Y))
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const int64_t n_out = node.shape.numel();
    const T* y = node.value_as<const T>();
    const T* dy = node.grad_as<const T>();
    T* dv = tape.arena().allocate_array<T>(n_out);
    for (int64_t o = 0; o < n_out; ++o) dv[o] = y[o] == T(0) ? T(0) : dy[o] / (y[o] * T(2));
    add_var_gradient<T>(tape, node, dv, dx);
  });
}

void std_grad_graph(GradGraph& g) {
  // Y = √var X  =>  dX += var's gradient for dV = masked_fill(dY / (2Y), Y = 0, 0)
  const Tensor y = g.output();
  const Tensor dv = masked_fill(div(g.grad(), scale(y, 2.0)), eq(y, 0.0), 0.0);
  g.add(0, var_gradient(g, dv));
}

const OpDef kVar{.name = "var",
                 .backward = var_backward,
                 .arguments = var_arguments,
                 .saves = saves::kInput0,
                 .grad_graph = var_grad_graph};
const OpDef kStd{.name = "std",
                 .backward = std_backward,
                 .arguments = var_arguments,
                 .saves = saves::kInput0 | saves::kOutput,
                 .grad_graph = std_grad_graph};
TAPEGRAD_REGISTER_OP(kVar);
TAPEGRAD_REGISTER_OP(kStd);

template <bool Sqrt>
Tensor variance(const OpDef& op, const Tensor& x, std::span<const int> dims, int64_t correction,
                bool keepdim) {
  if (correction < 0) {
    throw_unary_error(op.name, x, "correction must be >= 0, got " + std::to_string(correction));
  }
  const DimsReduction r = plan_dims_reduction(op.name, x, dims, keepdim);
  const VarState state{r.dims, correction, dims.empty() || x.shape().rank() == 0};
  Tensor y = x.tape().record(op, r.out_shape, x.dtype(), {x}, state);
  dispatch(y.dtype(), [&]<class T>() {
    // Two passes in double: the group means, then Σ (x − mean)², as torch's CPU kernels sum.
    const int64_t n_out = y.numel();
    Arena& arena = y.tape().arena();
    double* mean = arena.allocate_array<double>(n_out);
    double* squares = arena.allocate_array<double>(n_out);
    std::fill(mean, mean + n_out, 0.0);
    std::fill(squares, squares + n_out, 0.0);
    const T* in = x.data<T>();
    if (n_out > 0 && reduces_last_dims(x.shape(), r.dims.mask)) {
      for (int64_t o = 0; o < n_out; ++o) {
        const T* row = in + o * r.group;
        const double mo = row_sum(row, r.group) / static_cast<double>(r.group);
        mean[o] = mo;
        squares[o] = row_sum_of(row, r.group, [mo](double v) { return (v - mo) * (v - mo); });
      }
    } else {
      for_each_in_reduction(x.shape(), r.dims.mask,
                            [&](int64_t o, int64_t i) { mean[o] += in[i]; });
      for (int64_t o = 0; o < n_out; ++o) mean[o] /= static_cast<double>(r.group);
      for_each_in_reduction(x.shape(), r.dims.mask, [&](int64_t o, int64_t i) {
        const double d = static_cast<double>(in[i]) - mean[o];
        squares[o] += d * d;
      });
    }
    const double dof = std::max(0.0, static_cast<double>(r.group - correction));
    T* out = output_data<T>(y);
    for (int64_t o = 0; o < n_out; ++o) {
      const double v = squares[o] / dof;
      out[o] = static_cast<T>(Sqrt ? std::sqrt(v) : v);
    }
  });
  return y;
}

}  // namespace

Tensor var(const Tensor& x, std::span<const int> dims, int64_t correction, bool keepdim) {
  return variance<false>(kVar, x, dims, correction, keepdim);
}

Tensor std(const Tensor& x, std::span<const int> dims, int64_t correction, bool keepdim) {
  return variance<true>(kStd, x, dims, correction, keepdim);
}

std::pair<Tensor, Tensor> var_mean(const Tensor& x, std::span<const int> dims, int64_t correction,
                                   bool keepdim) {
  Tensor v = var(x, dims, correction, keepdim);
  return {v, mean(x, dims, keepdim)};
}

std::pair<Tensor, Tensor> std_mean(const Tensor& x, std::span<const int> dims, int64_t correction,
                                   bool keepdim) {
  Tensor s = std(x, dims, correction, keepdim);
  return {s, mean(x, dims, keepdim)};
}

}  // namespace tapegrad
