// maximum and minimum: two ops sharing everything but the direction, torch.maximum and
// torch.minimum with broadcasting, NaN propagation and torch's even split of the gradient at ties.
#include <cmath>
#include <limits>

#include <tapegrad/ops/detail/binary.h>
#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// Whether `a` wins over `b` strictly: a > b for maximum, a < b for minimum.
template <bool Max, class T>
bool beats(T a, T b) {
  return Max ? a > b : a < b;
}

template <bool Max>
void extremum_backward(Tape& tape, const Node& node) {
  // Y = max(A, B)  =>  dA += reduce(where(A = B, dY/2, dY) masked to 0 where A < B),
  //                    dB += reduce(where(A = B, dY/2, dY) masked to 0 where A > B)
  // (minimum: the masks swapped; a nan in A or B passes dY to both, as torch's formula does)
  binary_backward(
      tape, node,
      []<class T>(T dy, T a, T b, T) { return a == b             ? dy / T(2)
                                              : beats<Max>(b, a) ? T(0)
                                                                 : dy; },
      []<class T>(T dy, T a, T b, T) { return b == a             ? dy / T(2)
                                              : beats<Max>(a, b) ? T(0)
                                                                 : dy; });
}

template <bool Max>
void extremum_grad_graph(GradGraph& g) {
  // Y = max(A, B)  =>  dA += sum_to_size(masked_fill(where(eq(A, B), dY / 2, dY), lt(A, B), 0)),
  //                    dB += sum_to_size(masked_fill(where(eq(A, B), dY / 2, dY), gt(A, B), 0))
  const Tensor a = g.input(0), b = g.input(1);
  const Shape a_shape = a.shape(), b_shape = b.shape();
  const Tensor shared = where(eq(a, b), div_scalar(g.grad(), 2.0), g.grad());
  if (g.needs(0))
    g.add(0, sum_to_size(masked_fill(shared, Max ? lt(a, b) : gt(a, b), 0.0), a_shape));
  if (g.needs(1))
    g.add(1, sum_to_size(masked_fill(shared, Max ? gt(a, b) : lt(a, b), 0.0), b_shape));
}

const OpDef kMaximum{.name = "maximum",
                     .backward = extremum_backward<true>,
                     .saves = saves::kInput0 | saves::kInput1,
                     .grad_graph = extremum_grad_graph<true>};
const OpDef kMinimum{.name = "minimum",
                     .backward = extremum_backward<false>,
                     .saves = saves::kInput0 | saves::kInput1,
                     .grad_graph = extremum_grad_graph<false>};
TAPEGRAD_REGISTER_OP(kMaximum);
TAPEGRAD_REGISTER_OP(kMinimum);

template <bool Max>
Tensor extremum(const OpDef& op, const Tensor& a, const Tensor& b) {
  check_same_dtype(op.name, a, b);
  const Shape out = broadcast_shape(op.name, a, "and", b);
  Tensor y = a.tape().record(op, out, a.dtype(), {a, b});
  dispatch(y.dtype(), [&]<class T>() {
    const T* av = a.data<T>();
    const T* bv = b.data<T>();
    T* yv = output_data<T>(y);
    // torch's scalar loop: nan if either is nan, else std::max / std::min (which keep `a` at a
    // tie; torch's vector loop may keep either zero of max(−0, +0), so its sign is unspecified).
    for_each_broadcast(out, broadcast_strides(a.shape(), out), broadcast_strides(b.shape(), out),
                       [&](int64_t o, int64_t i, int64_t j) {
                         const T x = av[i], z = bv[j];
                         yv[o] = std::isnan(x) || std::isnan(z)
                                     ? std::numeric_limits<T>::quiet_NaN()
                                     : (beats<Max>(z, x) ? z : x);
                       });
  });
  return y;
}

}  // namespace

Tensor maximum(const Tensor& a, const Tensor& b) {
  return extremum<true>(kMaximum, a, b);
}

Tensor minimum(const Tensor& a, const Tensor& b) {
  return extremum<false>(kMinimum, a, b);
}

}  // namespace tapegrad
