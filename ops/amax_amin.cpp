// amax and amin: the largest / smallest value over a list of dims (torch.amax, torch.amin; an
// empty list reduces every dim). NaN propagates; ties share the gradient evenly, as in torch.
#include <cmath>
#include <limits>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dims.h>
#include <tapegrad/ops/detail/reduce_rows.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct ExtremeDimsState {
  ReducedDims dims;
};

template <bool Max, class T>
bool beats(T a, T b) {
  return Max ? a > b : a < b;
}

template <bool Max>
void amax_backward(Tape& tape, const Node& node) {
  // Y = amax_dims X  =>  dX += (dY / Σ_dims M) ⊙ M, M = [X = Y] (torch's scale_grad_by_count:
  // ties share dY evenly; a NaN Y matches nothing, so its group gets dY / 0 · 0 = NaN)
  dispatch(node.dtype, [&]<class T>() {
    const auto [dx, xv, yv, dy] = unary_grad<T>(tape, node);
    if (dx == nullptr) return;
    const Node& x = tape.input(node, 0);
    const uint32_t mask = node.state_as<ExtremeDimsState>().dims.mask;
    const int64_t n_out = node.shape.numel();
    if (n_out > 0 && reduces_last_dims(x.shape, mask)) {
      const int64_t group = x.shape.numel() / n_out;
      for (int64_t o = 0; o < n_out; ++o) {
        const T* row = xv + o * group;
        T* drow = dx + o * group;
        const T y = yv[o];
        T count = T(0);
        for (int64_t k = 0; k < group; ++k) count += static_cast<T>(row[k] == y);
        const T share = dy[o] / count;
        for (int64_t k = 0; k < group; ++k) drow[k] += share * static_cast<T>(row[k] == y);
      }
      return;
    }
    T* count = tape.arena().allocate_array<T>(n_out);
    for (int64_t o = 0; o < n_out; ++o) count[o] = T(0);
    for_each_in_reduction(x.shape, mask, [&](int64_t o, int64_t i) { count[o] += xv[i] == yv[o]; });
    for_each_in_reduction(x.shape, mask, [&](int64_t o, int64_t i) {
      dx[i] += (dy[o] / count[o]) * static_cast<T>(xv[i] == yv[o]);
    });
  });
}

void amax_grad_graph(GradGraph& g) {
  // Y = amax_dims X  =>  dX += expand(dY / Σ_dims M) ⊙ M, M = eq(X, Y) (a constant)
  const Tensor x = g.input(0);
  const Shape shape = x.shape();
  const DimsReduction r = replan_dims_reduction(shape, g.state<ExtremeDimsState>().dims);
  const Tensor matches = eq(x, expand(kept_view(g.output(), r.kept_shape), shape));
  const Tensor count = sum(matches, reduced_dims_list(r.dims, shape.rank()), true);
  g.add(0, mul(expand(div(kept_view(g.grad(), r.kept_shape), count), shape), matches));
}

std::string dims_arguments(const Tape& t, const Node& n) {
  return reduced_dims_text(t.input(n, 0), n.state_as<ExtremeDimsState>().dims);
}

const OpDef kAmax{.name = "amax",
                  .backward = amax_backward<true>,
                  .arguments = dims_arguments,
                  .saves = saves::kInput0 | saves::kOutput,
                  .grad_graph = amax_grad_graph};
const OpDef kAmin{.name = "amin",
                  .backward = amax_backward<false>,
                  .arguments = dims_arguments,
                  .saves = saves::kInput0 | saves::kOutput,
                  .grad_graph = amax_grad_graph};
TAPEGRAD_REGISTER_OP(kAmax);
TAPEGRAD_REGISTER_OP(kAmin);

template <bool Max>
Tensor extreme_over_dims(const OpDef& op, const Tensor& x, std::span<const int> dims,
                         bool keepdim) {
  const DimsReduction r = plan_dims_reduction(op.name, x, dims, keepdim);
  if (r.group == 0) {
    for (int d = 0; d < x.shape().rank(); ++d) {
      if (((r.dims.mask >> d) & 1u) && x.shape()[d] == 0) {
        throw_unary_error(op.name, x,
                          std::string("cannot take the ") + op.name + " over dim " +
                              std::to_string(d) + " of size 0 (it has no identity)");
      }
    }
  }
  Tensor y = x.tape().record(op, r.out_shape, x.dtype(), {x}, ExtremeDimsState{r.dims});
  dispatch(y.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    if (r.group > 0 && reduces_last_dims(x.shape(), r.dims.mask)) {
      // The first extreme of each row, or its first NaN: what the walk below keeps.
      for (int64_t o = 0; o < y.numel(); ++o) {
        const T* row = in + o * r.group;
        out[o] = row[row_extreme_index<Max>(row, r.group)];
      }
      return;
    }
    const T start = Max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    for (int64_t o = 0; o < y.numel(); ++o) out[o] = start;
    // A NaN wins and stays, as in torch.
    for_each_in_reduction(x.shape(), r.dims.mask, [&](int64_t o, int64_t i) {
      if (beats<Max>(in[i], out[o]) || std::isnan(in[i])) out[o] = in[i];
    });
  });
  return y;
}

}  // namespace

Tensor amax(const Tensor& x, std::span<const int> dims, bool keepdim) {
  return extreme_over_dims<true>(kAmax, x, dims, keepdim);
}

Tensor amin(const Tensor& x, std::span<const int> dims, bool keepdim) {
  return extreme_over_dims<false>(kAmin, x, dims, keepdim);
}

}  // namespace tapegrad
