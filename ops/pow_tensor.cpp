// pow with a tensor exponent: xᵖ elementwise, both broadcast (torch.pow(Tensor, Tensor)), with
// torch's gradients for the base and the exponent.
//
// The value is SLEEF's 1-ulp pow on vectors, as torch's CPU kernel computes it (the C library's
// at baseline), so a value may differ from torch's in the last bit only in a row's tail, which
// torch computes with the C library's pow.
#include <cstdint>

#include <tapegrad/graph/factory.h>
#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/ops/detail/binary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void pow_tensor_backward(Tape& tape, const Node& node) {
  // Y = Xᴾ  =>  dX += reduce(dY ⊙ (P·Xᴾ⁻¹)) (0 where P = 0); dP += reduce(dY ⊙ (Y ⊙ ln X)) (0
  // where X = 0 and P >= 0: torch's pow_backward_self / pow_backward_exponent)
  binary_backward_rows(
      tape, node,
      []<class T>(const T* x, const T* p, const T* y, const T* dy, T* gx, T* gp, int64_t n) {
        if (gx != nullptr) {
          for (int64_t i = 0; i < n; ++i) gx[i] = p[i] - T(1);
          vmath::map(vmath::Binary::kPow, x, gx, gx, n);
          for (int64_t i = 0; i < n; ++i) {
            gx[i] = p[i] == T(0) ? T(0) : dy[i] * (p[i] * gx[i]);
          }
        }
        if (gp != nullptr) {
          vmath::log(x, gp, n);
          for (int64_t i = 0; i < n; ++i) {
            gp[i] = x[i] == T(0) && p[i] >= T(0) ? T(0) : dy[i] * (y[i] * gp[i]);
          }
        }
      });
}

void pow_tensor_grad_graph(GradGraph& g) {
  // Y = Xᴾ  =>  dX += reduce(where(P = 0, 0, dY ⊙ (P ⊙ X^(P−1))));
  // dP += reduce(where(X = 0 ∧ P >= 0, 0, dY ⊙ (Y ⊙ ln X)))
  const Tensor x = g.input(0), p = g.input(1), y = g.output();
  const Shape sx = x.shape(), sp = p.shape();
  const Tensor zero = zeros(Shape{}, x.dtype());
  if (g.needs(0)) {
    const Tensor term = mul(g.grad(), mul(p, pow(x, add_scalar(p, -1.0))));
    g.add(0, sum_to_size(where(eq(p, 0.0), zero, term), sx));
  }
  if (g.needs(1)) {
    const Tensor term = mul(g.grad(), mul(y, log(x)));
    g.add(1, sum_to_size(where(logical_and(eq(x, 0.0), ge(p, 0.0)), zero, term), sp));
  }
}

const OpDef kPowTensor{.name = "pow_tensor",
                       .backward = pow_tensor_backward,
                       .saves = saves::kInput0 | saves::kInput1 | saves::kOutput,
                       .grad_graph = pow_tensor_grad_graph};
TAPEGRAD_REGISTER_OP(kPowTensor);

}  // namespace

Tensor pow(const Tensor& x, const Tensor& exponent) {
  return binary_forward_rows(kPowTensor, x, exponent,
                             []<class T>(const T* a, const T* b, T* y, int64_t n) {
                               vmath::map(vmath::Binary::kPow, a, b, y, n);
                             });
}

// The base as a 0-D constant of the exponent's dtype (torch's wrapped number), broadcast.
Tensor pow(double base, const Tensor& exponent) {
  return pow(full(Shape{}, base, exponent.dtype()), exponent);
}

}  // namespace tapegrad
