// repeat_interleave: each element along a dim repeated `repeats` times in place
// (torch.repeat_interleave with an integer count); without a dim, of the flattened x.
#include <string>
#include <vector>

#include <tapegrad/ops/detail/layout_copy.h>
#include <tapegrad/ops/detail/view_op.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct RepeatInterleaveState {
  int dim;  // normalised to 0..rank-1
  int64_t repeats;
};

void repeat_interleave_backward(Tape& tape, const Node& node) {
  // Y[.., j·r + k, ..] = X[.., j, ..] for k < r  =>  dX[.., j, ..] += Σ_k dY[.., j·r + k, ..]
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      const auto [dim, r] = node.state_as<RepeatInterleaveState>();
      const int64_t inner = layout::inner_size(x.shape, dim);
      const int64_t rows = layout::outer_size(x.shape, dim) * x.shape[dim];
      const T* dy = node.grad_as<const T>();
      for (int64_t j = 0; j < rows; ++j) {
        for (int64_t k = 0; k < r; ++k) {
          layout::copy_run<true>(dy + (j * r + k) * inner, d + j * inner, inner);
        }
      }
    }
  });
}

void repeat_interleave_grad_graph(GradGraph& g) {
  // Y[.., j·r + k, ..] = X[.., j, ..]  =>  dX += dY as [outer, size, r, inner] summed over r
  const auto [dim, r] = g.state<RepeatInterleaveState>();
  const Shape shape = g.input(0).shape();
  const int64_t outer = layout::outer_size(shape, dim), inner = layout::inner_size(shape, dim);
  g.add(0, reshape(sum(reshape(g.grad(), {outer, shape[dim], r, inner}), 2), shape.dims()));
}

const OpDef kRepeatInterleave{.name = "repeat_interleave",
                              .backward = repeat_interleave_backward,
                              .arguments =
                                  [](const Tape&, const Node& n) {
                                    const auto [dim, r] = n.state_as<RepeatInterleaveState>();
                                    return "repeats " + std::to_string(r) + ", " +
                                           dim_text(dim, n.shape.rank());
                                  },
                              .grad_graph = repeat_interleave_grad_graph};
TAPEGRAD_REGISTER_OP(kRepeatInterleave);

}  // namespace

Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int> dim) {
  if (repeats < 0) {
    throw_unary_error("repeat_interleave", x,
                      "repeats " + std::to_string(repeats) + " must be non-negative");
  }
  if (!dim) return repeat_interleave(flatten(x), repeats, 0);  // torch: the flattened x
  if (x.rank() == 0) {
    throw_unary_error("repeat_interleave", x, "cannot repeat a 0-dim tensor along a dim");
  }
  const int d = layout::checked_dim("repeat_interleave", "x", x, *dim);
  std::vector<int64_t> dims(x.shape().dims().begin(), x.shape().dims().end());
  if (repeats > 0 && dims[static_cast<size_t>(d)] > (int64_t{1} << 60) / repeats) {
    throw_unary_error("repeat_interleave", x,
                      "repeats " + std::to_string(repeats) + " is too large");
  }
  dims[static_cast<size_t>(d)] *= repeats;
  const Shape shape{std::span<const int64_t>(dims)};
  Tensor y =
      x.tape().record(kRepeatInterleave, shape, x.dtype(), {x}, RepeatInterleaveState{d, repeats});
  dispatch(y.dtype(), [&]<class T>() {
    const int64_t inner = layout::inner_size(x.shape(), d);
    const int64_t rows = layout::outer_size(x.shape(), d) * x.shape()[d];
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    for (int64_t j = 0; j < rows; ++j) {
      for (int64_t k = 0; k < repeats; ++k) {
        layout::copy_run<false>(xv + j * inner, yv + (j * repeats + k) * inner, inner);
      }
    }
  });
  return y;
}

}  // namespace tapegrad
