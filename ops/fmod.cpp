// fmod and remainder: the two float remainders of a / b with broadcasting, torch.fmod (the sign of
// a, C's fmod) and torch.remainder (the sign of b, Python's %); a zero b gives NaN.
#include <cmath>

#include <tapegrad/ops/detail/binary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// torch's floor division of floats (div_floor_floating, Python's //): the quotient from the
// remainder, so that a == b·(a // b) + remainder(a, b) holds where floor(a / b) would round.
template <class T>
T floor_divide(T a, T b) {
  if (b == T(0)) return a / b;
  const T mod = std::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != T(0) && (b < T(0)) != (mod < T(0))) div -= T(1);
  if (div == T(0)) return std::copysign(T(0), a / b);
  T floordiv = std::floor(div);
  if (div - floordiv > T(0.5)) floordiv += T(1);
  return floordiv;
}

void fmod_backward(Tape& tape, const Node& node) {
  // Y = fmod(A, B)  =>  dA += reduce(dY), dB += reduce(−dY ⊙ trunc(A / B))
  binary_backward(
      tape, node, []<class T>(T dy, T, T, T) { return dy; },
      []<class T>(T dy, T a, T b, T) { return -dy * std::trunc(a / b); });
}

void remainder_backward(Tape& tape, const Node& node) {
  // Y = A − B·⌊A / B⌋  =>  dA += reduce(dY), dB += reduce(−dY ⊙ ⌊A / B⌋)
  binary_backward(
      tape, node, []<class T>(T dy, T, T, T) { return dy; },
      []<class T>(T dy, T a, T b, T) { return -dy * floor_divide(a, b); });
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
  return binary_forward(kFmod, a, b, []<class T>(T x, T z) { return std::fmod(x, z); });
}

Tensor remainder(const Tensor& a, const Tensor& b) {
  // torch's kernel: C's fmod, moved by b when its sign differs from b's.
  return binary_forward(kRemainder, a, b, []<class T>(T x, T z) {
    T mod = std::fmod(x, z);
    if (mod != T(0) && (z < T(0)) != (mod < T(0))) mod += z;
    return mod;
  });
}

}  // namespace tapegrad
