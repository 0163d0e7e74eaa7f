// softmax: exp(x - max) / Σ exp(x - max) along one dim, stable for large and -inf entries.
//
// Arithmetic as torch's CPU kernel (SoftMaxKernel.cpp, _vec_softmax_lastdim): in the tensor's
// own dtype (float32 accumulates in float32), max first, then e = exp(x - max), then
// s = 1 / Σ e, then y = e * s. -inf entries give exactly 0; a row that is all -inf gives NaN
// (-inf - -inf), as torch does; a NaN or +inf anywhere in a row makes the whole row NaN.
#include <algorithm>

#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dim.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

template <class T>
void softmax_forward(const T* x, T* y, const DimView& l, Arena& arena) {
  if (l.size == 0) return;
  if (l.inner == 1) {
    // The attention case: contiguous rows (the row function causal_dot_product_attention
    // shares).
    vmath::softmax_rows(x, y, l.outer, l.size);
    return;
  }
  // Another dim: each outer slice is a [dim_size, inner] row-major block; reduce down its
  // columns with whole rows at a time, so the inner loop stays contiguous.
  RowVec<T> m(arena.allocate_array<T>(l.inner), l.inner);
  RowVec<T> s(arena.allocate_array<T>(l.inner), l.inner);
  for (int64_t o = 0; o < l.outer; ++o) {
    ConstRowBlock<T> X(x + o * l.size * l.inner, l.size, l.inner);
    RowBlock<T> Y(y + o * l.size * l.inner, l.size, l.inner);
    m = X.row(0);
    // (A NaN the max skips still reaches the sum through its exp: the column is NaN either way.)
    for (int64_t d = 1; d < l.size; ++d) m = m.max(X.row(d));
    s.setZero();
    for (int64_t d = 0; d < l.size; ++d) {
      Y.row(d) = (X.row(d) - m).exp();
      s += Y.row(d);
    }
    s = s.inverse();
    for (int64_t d = 0; d < l.size; ++d) Y.row(d) *= s;
  }
}

struct SoftmaxState {
  int dim;  // normalised to 0..rank-1
};

void softmax_backward(Tape& tape, const Node& node) {
  // Y = softmax(X) along dim  =>  dX += Y ⊙ (dY − Σ_dim(dY ⊙ Y))   (reads only the saved Y)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const DimView l = view_around(node.shape, node.state_as<SoftmaxState>().dim);
    const T* y = node.value_as<const T>();
    const T* dy = node.grad_as<const T>();
    if (l.inner == 1) {
      vmath::softmax_rows_backward(y, dy, dx, l.outer, l.size);
      return;
    }
    RowVec<T> s(tape.arena().allocate_array<T>(l.inner), l.inner);
    for (int64_t o = 0; o < l.outer; ++o) {
      const int64_t off = o * l.size * l.inner;
      ConstRowBlock<T> Y(y + off, l.size, l.inner), dY(dy + off, l.size, l.inner);
      RowBlock<T> dX(dx + off, l.size, l.inner);
      s.setZero();
      for (int64_t d = 0; d < l.size; ++d) s += dY.row(d) * Y.row(d);
      for (int64_t d = 0; d < l.size; ++d) {
        dX.row(d) += Y.row(d) * (dY.row(d) - s);
      }
    }
  });
}

void softmax_grad_graph(GradGraph& g) {
  // Y = softmax(X) along dim  =>  dX += Y ⊙ (dY − Σ_dim(dY ⊙ Y))
  const int dim = g.state<SoftmaxState>().dim;
  const Tensor y = g.output();
  g.add(0, mul(y, g.grad() - sum(mul(g.grad(), y), dim, true)));
}

const OpDef kSoftmax{.name = "softmax",
                     .backward = softmax_backward,
                     .arguments =
                         [](const Tape&, const Node& n) {
                           return dim_text(n.state_as<SoftmaxState>().dim, n.shape.rank());
                         },
                     .saves = saves::kOutput,
                     .grad_graph = softmax_grad_graph};
TAPEGRAD_REGISTER_OP(kSoftmax);

}  // namespace

Tensor softmax(const Tensor& x, int dim) {
  if (x.rank() == 0 && (dim == 0 || dim == -1)) {
    // torch takes a 0-D tensor as one element along dim 0 or -1 (1, or NaN for ±inf and NaN):
    // the softmax of its [1] view, recorded as such, so the gradient (0) is softmax's.
    return reshape(softmax(reshape(x, {1}), 0), std::span<const int64_t>{});
  }
  if (dim < -x.rank() || dim >= x.rank()) {
    throw_unary_error(
        "softmax", x,
        "dim " + std::to_string(dim) + " out of range for rank " + std::to_string(x.rank()));
  }
  const int d = dim < 0 ? dim + x.rank() : dim;
  Tensor y = x.tape().record(kSoftmax, x.shape(), x.dtype(), {x}, SoftmaxState{d});
  const DimView l = view_around(x.shape(), d);
  dispatch(y.dtype(), [&]<class T>() {
    softmax_forward<T>(x.data<T>(), output_data<T>(y), l, y.tape().arena());
  });
  return y;
}

}  // namespace tapegrad
