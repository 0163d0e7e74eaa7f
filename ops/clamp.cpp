// clamp: min(max(x, min), max) with optional bounds, torch.clamp; clamp_min and clamp_max are
// clamp with one bound (the same forward and gradient as torch's clamp_min / clamp_max).
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// An absent bound is ∓inf: the same forward and the same mask (−inf <= x holds for every x but
// nan, which no bound passes anyway).
struct ClampState {
  double min;
  double max;
  bool has_min;
  bool has_max;
};

void clamp_backward(Tape& tape, const Node& node) {
  // Y = clamp(X, lo, hi)  =>  dX += where(lo <= X <= hi, dY, 0)   (bounds included, as torch)
  dispatch(node.dtype, [&]<class T>() {
    const InputGrad<T> g = tape.input_grad<T>(node, 0);
    if (g.data == nullptr) return;
    const ClampState& s = node.state_as<ClampState>();
    const T lo = static_cast<T>(s.min), hi = static_cast<T>(s.max);
    const T* x = tape.input(node, 0).value_as<const T>();
    const T* dy = node.grad_as<const T>();
    T* dx = g.data;
    const int64_t n = node.shape.numel();
    // The gradient passes where min <= x <= max, the bounds in x's dtype (nan x: nowhere);
    // branch-free (selects the compiler vectorises): where x falls is data, not predictable.
    if (g.overwrite) {  // 0 + term, without zero-filling first
      for (int64_t i = 0; i < n; ++i) dx[i] = T(0) + (((x[i] >= lo) & (x[i] <= hi)) ? dy[i] : T(0));
    } else {
      for (int64_t i = 0; i < n; ++i) dx[i] += ((x[i] >= lo) & (x[i] <= hi)) ? dy[i] : T(0);
    }
  });
}

void clamp_grad_graph(GradGraph& g) {
  // Y = clamp(X, lo, hi)  =>  dX += where(ge(X, lo) ⊙ le(X, hi), dY, 0)   (a constant mask)
  const ClampState s = g.state<ClampState>();
  const Tensor x = g.input(0), zero = zeros(Shape{}, x.dtype());
  g.add(0, where(mul(ge(x, s.min), le(x, s.max)), g.grad(), zero));
}

std::string clamp_arguments(const Tape&, const Node& n) {
  const ClampState& s = n.state_as<ClampState>();
  std::string text;
  if (s.has_min) text = "min " + number_text(s.min);
  if (s.has_max) text += (text.empty() ? "max " : ", max ") + number_text(s.max);
  return text;
}

const OpDef kClamp{.name = "clamp",
                   .backward = clamp_backward,
                   .arguments = clamp_arguments,
                   .saves = saves::kInput0,
                   .grad_graph = clamp_grad_graph};
TAPEGRAD_REGISTER_OP(kClamp);

}  // namespace

Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max) {
  if (!min && !max) {
    throw_unary_error("clamp", x, "at least one of min and max must be given");
  }
  for (const std::optional<double>& bound : {min, max}) {
    if (bound && x.dtype() == DType::Float32 && std::isfinite(*bound) &&
        std::abs(*bound) > static_cast<double>(std::numeric_limits<float>::max())) {
      throw_unary_error("clamp", x, "bound " + number_text(*bound) + " overflows float32");
    }
  }
  constexpr double inf = std::numeric_limits<double>::infinity();
  const ClampState s{min.value_or(-inf), max.value_or(inf), min.has_value(), max.has_value()};
  Tensor y = x.tape().record(kClamp, x.shape(), x.dtype(), {x}, s);
  dispatch(y.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    const T lo = static_cast<T>(s.min), hi = static_cast<T>(s.max);
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) {
      // nan stays nan; otherwise min(max(x, lo), hi), so lo > hi gives hi everywhere. A nan
      // bound compares false and leaves x, as torch 1.13's kernel does.
      const T v = in[i];
      const T above = v < lo ? lo : v;
      const T clamped = above > hi ? hi : above;
      out[i] = v != v ? v : clamped;
    }
  });
  return y;
}

Tensor clamp_min(const Tensor& x, double min) {
  return clamp(x, min, std::nullopt);
}

Tensor clamp_max(const Tensor& x, double max) {
  return clamp(x, std::nullopt, max);
}

}  // namespace tapegrad
