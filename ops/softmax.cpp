// softmax: exp(x - max) / Σ exp(x - max) along one dim, stable for large and -inf entries.
//
// Arithmetic as torch's CPU kernel (SoftMaxKernel.cpp, _vec_softmax_lastdim): in the tensor's
// own dtype (float32 accumulates in float32), max first, then e = exp(x - max), then
// s = 1 / Σ e, then y = e * s. -inf entries give exactly 0; a row that is all -inf gives NaN
// (-inf - -inf), as torch does; a NaN or +inf anywhere in a row makes the whole row NaN.
#include <algorithm>

#include "ops/detail/op_util.h"
#include "ops/ops.h"

namespace tapegrad {

namespace {

// The tensor as [outer, dim_size, inner] around the softmax dim.
struct Layout {
  int64_t outer = 1, dim_size = 1, inner = 1;
};

Layout layout_of(const Shape& shape, int dim) {
  Layout l;
  for (int d = 0; d < dim; ++d) l.outer *= shape[d];
  l.dim_size = shape[dim];
  for (int d = dim + 1; d < shape.rank(); ++d) l.inner *= shape[d];
  return l;
}

template <class T>
using RowVec = Eigen::Map<Eigen::Array<T, 1, Eigen::Dynamic>>;
template <class T>
using RowBlock = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
template <class T>
using ConstRowBlock =
    Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

template <class T>
void softmax_forward(const T* x, T* y, const Layout& l, Arena& arena) {
  if (l.dim_size == 0) return;
  if (l.inner == 1) {
    // The attention case: contiguous rows.
    for (int64_t o = 0; o < l.outer; ++o) {
      ConstArrayMap<T> xr(x + o * l.dim_size, l.dim_size);
      ArrayMap<T> yr(y + o * l.dim_size, l.dim_size);
      const T m = xr.template maxCoeff<Eigen::PropagateNaN>();
      yr = (xr - m).exp();
      const T s = T(1) / yr.sum();
      yr *= s;
    }
    return;
  }
  // Another dim: each outer slice is a [dim_size, inner] row-major block; reduce down its
  // columns with whole rows at a time, so the inner loop stays contiguous.
  RowVec<T> m(arena.allocate_array<T>(l.inner), l.inner);
  RowVec<T> s(arena.allocate_array<T>(l.inner), l.inner);
  for (int64_t o = 0; o < l.outer; ++o) {
    ConstRowBlock<T> X(x + o * l.dim_size * l.inner, l.dim_size, l.inner);
    RowBlock<T> Y(y + o * l.dim_size * l.inner, l.dim_size, l.inner);
    m = X.row(0);
    // (A NaN the max skips still reaches the sum through its exp: the column is NaN either way.)
    for (int64_t d = 1; d < l.dim_size; ++d) m = m.max(X.row(d));
    s.setZero();
    for (int64_t d = 0; d < l.dim_size; ++d) {
      Y.row(d) = (X.row(d) - m).exp();
      s += Y.row(d);
    }
    s = s.inverse();
    for (int64_t d = 0; d < l.dim_size; ++d) Y.row(d) *= s;
  }
}

void softmax_backward(Tape& tape, const Node& node) {
  // Y = softmax(X) along dim  =>  dX += Y ⊙ (dY − Σ_dim(dY ⊙ Y))   (reads only the saved Y)
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    T* dx = tape.grad_for<T>(node, 0, x.shape);
    if (dx == nullptr) return;
    const Layout l = layout_of(node.shape, static_cast<int>(node.iattr[0]));
    const T* y = node.value_as<const T>();
    const T* dy = node.grad_as<const T>();
    if (l.inner == 1) {
      for (int64_t o = 0; o < l.outer; ++o) {
        const int64_t off = o * l.dim_size;
        ConstArrayMap<T> yr(y + off, l.dim_size), dyr(dy + off, l.dim_size);
        const T s = (dyr * yr).sum();
        ArrayMap<T>(dx + off, l.dim_size) += yr * (dyr - s);
      }
      return;
    }
    RowVec<T> s(tape.arena().allocate_array<T>(l.inner), l.inner);
    for (int64_t o = 0; o < l.outer; ++o) {
      const int64_t off = o * l.dim_size * l.inner;
      ConstRowBlock<T> Y(y + off, l.dim_size, l.inner), dY(dy + off, l.dim_size, l.inner);
      RowBlock<T> dX(dx + off, l.dim_size, l.inner);
      s.setZero();
      for (int64_t d = 0; d < l.dim_size; ++d) s += dY.row(d) * Y.row(d);
      for (int64_t d = 0; d < l.dim_size; ++d) {
        dX.row(d) += Y.row(d) * (dY.row(d) - s);
      }
    }
  });
}

const OpDef kSoftmax{"softmax", softmax_backward};
TAPEGRAD_REGISTER_OP(kSoftmax);

}  // namespace

Tensor softmax(const Tensor& x, int dim) {
  if (x.rank() == 0) throw_unary_error("softmax", x, "expected at least 1 dim, got a scalar");
  if (dim < -x.rank() || dim >= x.rank()) {
    throw_unary_error(
        "softmax", x,
        "dim " + std::to_string(dim) + " out of range for rank " + std::to_string(x.rank()));
  }
  const int d = dim < 0 ? dim + x.rank() : dim;
  Tensor y = x.tape().record(kSoftmax, x.shape(), x.dtype(), {x});
  y.tape().node(y.id()).iattr[0] = d;
  const Layout l = layout_of(x.shape(), d);
  dispatch(y.dtype(), [&]<class T>() {
    softmax_forward<T>(value_of<T>(x), value_of<T>(y), l, y.tape().arena());
  });
  return y;
}

}  // namespace tapegrad
