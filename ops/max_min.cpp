// max and min over all elements (torch.max(x), torch.min(x)): a scalar; NaN propagates, and the
// gradient is shared evenly among the elements equal to the result (among the NaNs when it is
// NaN), as torch's evenly_distribute_backward does.
#include <cmath>
#include <limits>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_rows.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// Whether x is one of the elements the gradient goes to: equal to y, or NaN when y is.
template <class T>
bool picked(T x, T y) {
  return std::isnan(y) ? std::isnan(x) : x == y;
}

void max_all_backward(Tape& tape, const Node& node) {
  // y = max X  =>  dX += where(M, dy / Σ M, 0), M = [X = y] (or [X is NaN] when y is NaN)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const Node& x = tape.input(node, 0);
    const T* xv = x.value_as<const T>();
    const T y = node.value_as<const T>()[0];
    const int64_t n = x.shape.numel();
    if (!std::isnan(y)) {  // the picks are the elements equal to y, counted branch-free
      int64_t count = 0;
      for (int64_t i = 0; i < n; ++i) count += xv[i] == y;
      const T share = node.grad_as<const T>()[0] / static_cast<T>(count);
      for (int64_t i = 0; i < n; ++i) dx[i] += xv[i] == y ? share : T(0);
      return;
    }
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) count += picked(xv[i], y);
    const T share = node.grad_as<const T>()[0] / static_cast<T>(count);
    for (int64_t i = 0; i < n; ++i) {
      if (picked(xv[i], y)) dx[i] += share;
    }
  });
}

void max_all_grad_graph(GradGraph& g) {
  // y = max X  =>  dX += where(M, dy / Σ M, 0), M a constant
  const Tensor x = g.input(0);
  const Shape shape = x.shape();
  const double y = g.output().item();
  const Tensor matches = indicator(x, [y](double v) { return picked(v, y); });
  double count = 0;
  for (const double m : matches.values()) count += m;
  g.add(0, where(matches, expand(div_scalar(g.grad(), count), shape), zeros(shape, x.dtype())));
}

const OpDef kMax{.name = "max",
                 .backward = max_all_backward,
                 .saves = saves::kInput0 | saves::kOutput,
                 .grad_graph = max_all_grad_graph};
const OpDef kMin{.name = "min",
                 .backward = max_all_backward,
                 .saves = saves::kInput0 | saves::kOutput,
                 .grad_graph = max_all_grad_graph};
TAPEGRAD_REGISTER_OP(kMax);
TAPEGRAD_REGISTER_OP(kMin);

template <bool Max>
Tensor extreme_of_all(const OpDef& op, const Tensor& x) {
  if (x.numel() == 0) {
    throw_unary_error(op.name, x,
                      std::string("cannot take the ") + op.name +
                          " of an empty tensor (it has no identity; reduce along a dim instead)");
  }
  Tensor y = x.tape().record(op, Shape{}, x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    // The first extreme, or the first NaN.
    output_data<T>(y)[0] = in[row_extreme_index<Max>(in, x.numel())];
  });
  return y;
}

}  // namespace

Tensor max(const Tensor& x) {
  return extreme_of_all<true>(kMax, x);
}

Tensor min(const Tensor& x) {
  return extreme_of_all<false>(kMin, x);
}

}  // namespace tapegrad
