// scale: x times a constant, and x divided by one (operator/), each computed as torch computes it.
#include <cmath>

#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// The constant c, and whether the op divides by it (torch's x / c divides, and x * (1/c) differs
// from it in the last bit for about 40% of float32 values when c = √2).
struct ScaleState {
  double c;
  bool divide;
};

// x·c or x/c as "× 1/√k" when the factor is 1/√k for an integer k ≥ 2 (the attention scale),
// else "× c" / "÷ c".
std::string scale_text(const Tape&, const Node& node) {
  const auto [c, divide] = node.state_as<ScaleState>();
  const double divisor = divide ? c : 1.0 / c;
  const double k = std::round(divisor * divisor);
  if (divisor > 0 && k >= 2 && std::abs(divisor * divisor - k) < 1e-9 * k &&
      std::abs(divisor - std::round(divisor)) > 1e-9) {
    return "× 1/√" + number_text(k);
  }
  return divide ? "÷ " + number_text(c) : "× " + number_text(c);
}

void scale_backward(Tape& tape, const Node& node) {
  // Y = X·c  =>  dX += dY·c   (Y = X / c  =>  dX += dY / c)
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      const auto [c0, divide] = node.state_as<ScaleState>();
      const T c = static_cast<T>(c0);
      if (divide) {
        ArrayMap<T>(d, x.shape.numel()) += grad_array_of<T>(node) / c;
      } else {
        ArrayMap<T>(d, x.shape.numel()) += grad_array_of<T>(node) * c;
      }
    }
  });
}

void scale_grad_graph(GradGraph& g) {
  // Y = X·c  =>  dX += dY·c;  Y = X / c  =>  dX += dY / c
  const ScaleState s = g.state<ScaleState>();
  g.add(0, s.divide ? div_scalar(g.grad(), s.c) : scale(g.grad(), s.c));
}

const OpDef kScale{.name = "scale",
                   .backward = scale_backward,
                   .arguments = scale_text,
                   .grad_graph = scale_grad_graph};
TAPEGRAD_REGISTER_OP(kScale);

Tensor record_scale(const Tensor& x, double c, bool divide) {
  Tensor y = x.tape().record(kScale, x.shape(), x.dtype(), {x}, ScaleState{c, divide});
  dispatch(y.dtype(), [&]<class T>() {
    // The constant is rounded to the tensor's dtype first, as torch does with a Python number.
    const T ct = static_cast<T>(c);
    if (divide) {
      array_of<T>(y.node()) = array_of<T>(x.node()) / ct;
    } else {
      array_of<T>(y.node()) = array_of<T>(x.node()) * ct;
    }
  });
  return y;
}

}  // namespace

Tensor scale(const Tensor& x, double factor) {
  return record_scale(x, factor, false);
}

Tensor div_scalar(const Tensor& x, double divisor) {
  return record_scale(x, divisor, true);
}

}  // namespace tapegrad
