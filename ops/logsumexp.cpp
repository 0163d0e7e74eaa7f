// logsumexp: log Σ exp(x) over a list of dims (torch.logsumexp), with the max subtracted first.
#include <cmath>
#include <limits>

#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dims.h>
#include <tapegrad/ops/detail/reduce_rows.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct LogsumexpState {
  ReducedDims dims;
};

void logsumexp_backward(Tape& tape, const Node& node) {
  // Y = log Σ_dims exp X  =>  dX += dY ⊙ exp(X − Y) (broadcast over the reduced dims)
  dispatch(node.dtype, [&]<class T>() {
    const auto [dx, xv, yv, dy] = unary_grad<T>(tape, node);
    if (dx == nullptr) return;
    const Node& x = tape.input(node, 0);
    const uint32_t mask = node.state_as<LogsumexpState>().dims.mask;
    const int64_t n_out = node.shape.numel();
    if (n_out > 0 && reduces_last_dims(x.shape, mask)) {
      // Row by row, exp over the row at once (vmath: SLEEF's, as torch's exp kernel).
      const int64_t group = x.shape.numel() / n_out;
      T* e = tape.arena().allocate_array<T>(group);
      for (int64_t o = 0; o < n_out; ++o) {
        const T* row = xv + o * group;
        T* drow = dx + o * group;
        const T y = yv[o], d = dy[o];
        for (int64_t k = 0; k < group; ++k) e[k] = row[k] - y;
        vmath::exp(e, e, group);
        for (int64_t k = 0; k < group; ++k) drow[k] += d * e[k];
      }
      return;
    }
    for_each_in_reduction(x.shape, node.state_as<LogsumexpState>().dims.mask,
                          [&](int64_t o, int64_t i) { dx[i] += dy[o] * std::exp(xv[i] - yv[o]); });
  });
}

void logsumexp_grad_graph(GradGraph& g) {
  // Y = log Σ_dims exp X  =>  dX += dY ⊙ exp(X − Y), Y recorded (its own backward again)
  const Tensor x = g.input(0);
  const Shape shape = x.shape();
  const DimsReduction r = replan_dims_reduction(shape, g.state<LogsumexpState>().dims);
  const Tensor y = expand(kept_view(g.output(), r.kept_shape), shape);
  g.add(0, mul(expand(kept_view(g.grad(), r.kept_shape), shape), exp(sub(x, y))));
}

const OpDef kLogsumexp{.name = "logsumexp",
                       .backward = logsumexp_backward,
                       .arguments =
                           [](const Tape& t, const Node& n) {
                             return reduced_dims_text(t.input(n, 0),
                                                      n.state_as<LogsumexpState>().dims);
                           },
                       .saves = saves::kInput0 | saves::kOutput,
                       .grad_graph = logsumexp_grad_graph};
TAPEGRAD_REGISTER_OP(kLogsumexp);

}  // namespace

Tensor logsumexp(const Tensor& x, std::span<const int> dims, bool keepdim) {
  const DimsReduction r = plan_dims_reduction("logsumexp", x, dims, keepdim);
  Tensor y = x.tape().record(kLogsumexp, r.out_shape, x.dtype(), {x}, LogsumexpState{r.dims});
  dispatch(y.dtype(), [&]<class T>() {
    const int64_t n_out = y.numel();
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    Arena& arena = y.tape().arena();
    if (n_out > 0 && r.group > 0 && reduces_last_dims(x.shape(), r.dims.mask)) {
      // Row by row: the shift as below, exp over the row at once (vmath: SLEEF's, as torch's
      // exp kernel), the sum in double.
      T* e = arena.allocate_array<T>(r.group);
      for (int64_t o = 0; o < n_out; ++o) {
        const T* row = in + o * r.group;
        T shift = row[row_extreme_index<true>(row, r.group)];
        if (std::isinf(shift)) shift = T(0);
        for (int64_t k = 0; k < r.group; ++k) e[k] = row[k] - shift;
        vmath::exp(e, e, r.group);
        out[o] = std::log(static_cast<T>(row_sum(e, r.group))) + shift;
      }
      return;
    }
    // The group's max (NaN wins), replaced by 0 where it is ±inf, as torch shifts.
    T* shift = arena.allocate_array<T>(n_out);
    for (int64_t o = 0; o < n_out; ++o) shift[o] = -std::numeric_limits<T>::infinity();
    for_each_in_reduction(x.shape(), r.dims.mask, [&](int64_t o, int64_t i) {
      if (in[i] > shift[o] || std::isnan(in[i])) shift[o] = in[i];
    });
    for (int64_t o = 0; o < n_out; ++o) {
      if (std::isinf(shift[o])) shift[o] = T(0);
    }
    // Σ exp(x − shift) in double, then log and + shift in T, torch's order.
    double* total = arena.allocate_array<double>(n_out);
    for (int64_t o = 0; o < n_out; ++o) total[o] = 0.0;
    for_each_in_reduction(x.shape(), r.dims.mask,
                          [&](int64_t o, int64_t i) { total[o] += std::exp(in[i] - shift[o]); });
    for (int64_t o = 0; o < n_out; ++o) {
      out[o] = std::log(static_cast<T>(total[o])) + shift[o];
    }
  });
  return y;
}

}  // namespace tapegrad
