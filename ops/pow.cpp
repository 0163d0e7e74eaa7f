// pow: elementwise xᵖ for a constant p, with torch's special cases for the common exponents.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// out = xᵖ as torch's CPU kernel computes it: exact products and roots for p in {2, 3, -2, ½,
// -½, -1}, else pow in double (a negative x with a non-integer p gives nan).
template <class T>
void power(ArrayMap<T> out, const ArrayMap<T>& x, double p) {
  if (p == 2.0) {
    out = x * x;
  } else if (p == 3.0) {
    out = x * x * x;
  } else if (p == -2.0) {
    out = T(1) / (x * x);
  } else if (p == 0.5 || p == -0.5) {
    // std::sqrt: Eigen's float32 packet sqrt is inexact under EIGEN_FAST_MATH (see sqrt.cpp).
    for (int64_t i = 0; i < x.size(); ++i) {
      out[i] = p > 0 ? std::sqrt(x[i]) : T(1) / std::sqrt(x[i]);
    }
  } else if (p == -1.0) {
    out = T(1) / x;
  } else {
    for (int64_t i = 0; i < x.size(); ++i) {
      out[i] = static_cast<T>(std::pow(static_cast<double>(x[i]), p));
    }
  }
}

struct PowState {
  double exponent;
};

void pow_backward(Tape& tape, const Node& node) {
  // Y = Xᵖ  =>  dX += dY ⊙ (p·Xᵖ⁻¹)   (p = 0: dX += 0)
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    const double p = node.state_as<PowState>().exponent;
    T* d = tape.input_grad<T>(node, 0).to_add();
    if (d == nullptr || p == 0.0) return;
    const int64_t n = x.shape.numel();
    ArrayMap<T> term(tape.arena().allocate_array<T>(n), n);
    power<T>(term, array_of<T>(x), p - 1.0);
    ArrayMap<T>(d, n) += grad_array_of<T>(node) * (static_cast<T>(p) * term);
  });
}

void pow_grad_graph(GradGraph& g) {
  // Y = Xᵖ  =>  dX += dY ⊙ (p·Xᵖ⁻¹)   (p = 0: dX += 0)
  const double p = g.state<PowState>().exponent;
  const Tensor x = g.input(0);
  const Shape shape = x.shape();
  g.add(0, p == 0.0 ? zeros(shape, x.dtype()) : mul(g.grad(), scale(pow(x, p - 1.0), p)));
}

const OpDef kPow{
    .name = "pow",
    .backward = pow_backward,
    .arguments = [](const Tape&,
                    const Node& n) { return "^ " + number_text(n.state_as<PowState>().exponent); },
    .saves = saves::kInput0,
    .grad_graph = pow_grad_graph};
TAPEGRAD_REGISTER_OP(kPow);

}  // namespace

Tensor pow(const Tensor& x, double exponent) {
  Tensor y = x.tape().record(kPow, x.shape(), x.dtype(), {x}, PowState{exponent});
  dispatch(y.dtype(),
           [&]<class T>() { power<T>(array_of<T>(y.node()), array_of<T>(x.node()), exponent); });
  return y;
}

}  // namespace tapegrad
