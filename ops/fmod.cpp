// fmod and remainder: the two float remainders of a / b with broadcasting, torch.fmod (the sign of
// a, C's fmod) and torch.remainder (the sign of b, Python's %); a zero b gives NaN.
#include <cmath>
#include <cstdint>

#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/ops/detail/binary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// dA += reduce(dY), dB += reduce(−dY ⊙ Q) with quotient(a, b, q, n) writing Q's chunk into q.
template <class Quotient>
void remainder_backward_rows(Tape& tape, const Node& node, Quotient quotient) {
  binary_backward_rows(
      tape, node,
      [&]<class T>(const T* a, const T* b, const T*, const T* dy, T* ga, T* gb, int64_t n) {
        if (ga != nullptr) {
          for (int64_t i = 0; i < n; ++i) ga[i] = dy[i];
        }
        if (gb != nullptr) {
          quotient(a, b, gb, n);
          for (int64_t i = 0; i < n; ++i) gb[i] = -dy[i] * gb[i];
        }
      });
}

void fmod_backward(Tape& tape, const Node& node) {
  // Y = fmod(A, B)  =>  dA += reduce(dY), dB += reduce(−dY ⊙ trunc(A / B))
  remainder_backward_rows(tape, node, []<class T>(const T* a, const T* b, T* q, int64_t n) {
    for (int64_t i = 0; i < n; ++i) q[i] = std::trunc(a[i] / b[i]);
  });
}

void remainder_backward(Tape& tape, const Node& node) {
  // Y = A − B·⌊A / B⌋  =>  dA += reduce(dY), dB += reduce(−dY ⊙ ⌊A / B⌋) (⌊A / B⌋ torch's
  // floor division, consistent with the remainder)
  remainder_backward_rows(tape, node, []<class T>(const T* a, const T* b, T* q, int64_t n) {
    vmath::map(vmath::Binary::kFloorDivide, a, b, q, n);
  });
}

// dA += reduce(dY), dB += reduce(−dY ⊙ q(A, B)): q = trunc(A / B) (fmod) or floor (remainder).
void remainder_grad_graph(GradGraph& g, Tensor (*round_quotient)(const Tensor&)) {
  const Tensor a = g.input(0), b = g.input(1);
  const Shape a_shape = a.shape(), b_shape = b.shape();
  if (g.needs(0)) g.add(0, sum_to_size(g.grad(), a_shape));
  if (g.needs(1)) g.add(1, sum_to_size(mul(neg(g.grad()), round_quotient(div(a, b))), b_shape));
}

void fmod_grad_graph(GradGraph& g) {
  // Y = fmod(A, B)  =>  dA += reduce(dY), dB += reduce(−dY ⊙ trunc(A / B))
  remainder_grad_graph(g, trunc);
}

void remainder_op_grad_graph(GradGraph& g) {
  // Y = A − B·⌊A / B⌋  =>  dA += reduce(dY), dB += reduce(−dY ⊙ ⌊A / B⌋)
  remainder_grad_graph(g, floor);
}

const OpDef kFmod{.name = "fmod",
                  .backward = fmod_backward,
                  .saves = saves::kInput0 | saves::kInput1,
                  .grad_graph = fmod_grad_graph};
const OpDef kRemainder{.name = "remainder",
                       .backward = remainder_backward,
                       .saves = saves::kInput0 | saves::kInput1,
                       .grad_graph = remainder_op_grad_graph};
TAPEGRAD_REGISTER_OP(kFmod);
TAPEGRAD_REGISTER_OP(kRemainder);

}  // namespace

Tensor fmod(const Tensor& a, const Tensor& b) {
  return binary_forward_rows(kFmod, a, b, []<class T>(const T* x, const T* z, T* y, int64_t n) {
    vmath::map(vmath::Binary::kFmod, x, z, y, n);
  });
}

Tensor remainder(const Tensor& a, const Tensor& b) {
  // torch's kernel: C's fmod, moved by b when its sign differs from b's.
  return binary_forward_rows(kRemainder, a, b,
                             []<class T>(const T* x, const T* z, T* y, int64_t n) {
                               vmath::map(vmath::Binary::kRemainder, x, z, y, n);
                             });
}

}  // namespace tapegrad
