// slice: every step-th element of start..end along one dim (torch's x[start:end:step],
// aten::slice), copied, with Python's negative indices and clamped ends.
#include <limits>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/layout_copy.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct SliceState {
  int dim;  // normalised to 0..rank-1
  int64_t start;
  int64_t step;
};

// Calls f(x_offset, y_offset) for the first element of each run of `inner` contiguous elements
// the slice copies.
template <class F>
void slice_runs(const Shape& x_shape, const SliceState& s, int64_t length, F&& f) {
  const int64_t inner = layout::inner_size(x_shape, s.dim);
  const int64_t outer = layout::outer_size(x_shape, s.dim);
  const int64_t size = x_shape[s.dim];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < length; ++k) {
      f((o * size + s.start + k * s.step) * inner, (o * length + k) * inner, inner);
    }
  }
}

void slice_backward(Tape& tape, const Node& node) {
  // Y = X[.., start:end:step, ..]  =>  dX[.., start + k·step, ..] += dY[.., k, ..], zero elsewhere
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const SliceState s = node.state_as<SliceState>();
    const T* dy = node.grad_as<const T>();
    slice_runs(tape.input(node, 0).shape, s, node.shape[s.dim],
               [&](int64_t at, int64_t from, int64_t n) {
                 layout::copy_run<true>(dy + from, dx + at, n);
               });
  });
}

void slice_grad_graph(GradGraph& g) {
  // dX += index_add(zeros(X), dim, [start, start + step, ..], dY): dY scattered into zeros (its
  // own recorded backward selects those positions again)
  const SliceState s = g.state<SliceState>();
  const Shape shape = g.input(0).shape();
  const int64_t length = g.output().shape()[s.dim];
  std::vector<int64_t> positions(static_cast<size_t>(length));
  for (int64_t k = 0; k < length; ++k) positions[static_cast<size_t>(k)] = s.start + k * s.step;
  const Ids index(Shape{length}, std::move(positions));
  g.add(0, index_add(zeros(shape, g.grad().dtype()), s.dim, index, g.grad()));
}

const OpDef kSlice{.name = "slice",
                   .backward = slice_backward,
                   .arguments =
                       [](const Tape& t, const Node& n) {
                         const SliceState s = n.state_as<SliceState>();
                         return dim_text(s.dim, t.input(n, 0).shape.rank()) + ", start " +
                                std::to_string(s.start) + ", length " +
                                std::to_string(n.shape[s.dim]) + ", step " + std::to_string(s.step);
                       },
                   .saves = saves::kNothing,
                   .grad_graph = slice_grad_graph};
TAPEGRAD_REGISTER_OP(kSlice);

}  // namespace

Tensor slice(const Tensor& x, int dim, std::optional<int64_t> start, std::optional<int64_t> end,
             int64_t step) {
  if (x.rank() == 0) throw_unary_error("slice", x, "cannot slice a 0-dim tensor");
  const int d = layout::checked_dim("slice", "x", x, dim);
  if (step <= 0) {
    throw_unary_error("slice", x, "step must be positive, got " + std::to_string(step));
  }
  // aten::slice's rule: a negative index counts from the end, then both are clamped to
  // [0, size] and end to at least start.
  const int64_t size = x.shape()[d];
  int64_t lo = start.value_or(0), hi = end.value_or(std::numeric_limits<int64_t>::max());
  if (lo < 0) lo += size;
  if (hi < 0) hi += size;
  lo = lo < 0 ? 0 : (lo > size ? size : lo);
  hi = hi < lo ? lo : (hi > size ? size : hi);
  const int64_t length = hi == lo ? 0 : (hi - lo - 1) / step + 1;  // no overflow at a huge step
  Shape shape = x.shape();
  shape[d] = length;
  const SliceState s{d, lo, step};
  Tensor y = x.tape().record(kSlice, shape, x.dtype(), {x}, s);
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    slice_runs(x.shape(), s, length, [&](int64_t at, int64_t to, int64_t n) {
      layout::copy_run<false>(xv + at, yv + to, n);
    });
  });
  return y;
}

}  // namespace tapegrad
