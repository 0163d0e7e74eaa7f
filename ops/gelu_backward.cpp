// gelu_backward: dY ⊙ GELU'(X) as an op (torch's gelu_backward), gelu's recorded backward.
#include <string>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/ops/backward_ops.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

constexpr double kCost = 40.0;  // flops per element, as gelu's (parallel_for's split)
constexpr double kBeta = vmath::kGeluBeta, kKappa = vmath::kGeluKappa;
constexpr double kPdf = std::numbers::inv_sqrtpi * std::numbers::sqrt2 / 2.0;  // 1/√(2π)

// GELU''(x): tanh form (1 − t²)(u' − x·t·u'² + 3βκx²), t = tanh u, u = β(x + κx³),
// u' = β(1 + 3κx²); erf form φ(x)(2 − x²).
template <class T>
void second_derivative(bool tanh_form, const T* x, T* out, int64_t n) {
  if (!tanh_form) {
    for (int64_t i = 0; i < n; ++i) {
      out[i] = static_cast<T>(kPdf) * std::exp(x[i] * x[i] * T(-0.5)) * (T(2) - x[i] * x[i]);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    out[i] = static_cast<T>(kBeta) * (x[i] + static_cast<T>(kKappa) * x[i] * x[i] * x[i]);
  }
  vmath::tanh(out, out, n);  // SLEEF's, as the forward's
  for (int64_t i = 0; i < n; ++i) {
    const T t = out[i], x2 = x[i] * x[i];
    const T slope = static_cast<T>(kBeta) * (T(1) + static_cast<T>(3 * kKappa) * x2);
    out[i] = (T(1) - t * t) *
             (slope - x[i] * t * slope * slope + static_cast<T>(3 * kBeta * kKappa) * x2);
  }
}

// d(dY) += dZ ⊙ GELU'(X) into d (accumulating).
template <class T>
void first_derivative_times(bool tanh_form, const T* x, const T* dz, T* d, int64_t n) {
  if (tanh_form) {
    parallel_for(n, kCost, [&](int, int64_t begin, int64_t end) {
      vmath::gelu_tanh_backward(x + begin, dz + begin, d + begin, end - begin);
    });
    return;
  }
  for (int64_t i = 0; i < n; ++i) d[i] += dz[i] * gelu_erf_derivative(x[i]);
}

template <bool kTanh>
void backward_kernel(Tape& tape, const Node& node) {
  // Z = dY ⊙ G'(X)  =>  d(dY) += dZ ⊙ G'(X), dX += dZ ⊙ dY ⊙ G''(X)
  dispatch(node.dtype, [&]<class T>() {
    const T* dz = node.grad_as<T>();
    const T* dy = tape.input(node, 0).value_as<T>();
    const T* x = tape.input(node, 1).value_as<T>();
    const int64_t n = node.shape.numel();
    if (T* d_dy = tape.input_grad<T>(node, 0).to_add()) {
      first_derivative_times(kTanh, x, dz, d_dy, n);
    }
    T* dx = tape.input_grad<T>(node, 1).to_add();
    if (dx == nullptr) return;
    T* g2 = tape.arena().allocate_array<T>(n);
    second_derivative(kTanh, x, g2, n);
    for (int64_t i = 0; i < n; ++i) dx[i] += dz[i] * dy[i] * g2[i];
    tape.arena().release(g2, static_cast<size_t>(n) * sizeof(T));
  });
}

template <bool kTanh>
void grad_graph(GradGraph& g) {
  // Z = dY ⊙ G'(X)  =>  d(dY) += gelu_backward(dZ, X), dX += dZ ⊙ dY ⊙ G''(X)
  const Tensor dy = g.input(0), x = g.input(1);
  const char* approximate = kTanh ? "tanh" : "none";
  if (g.needs(0)) g.add(0, gelu_backward(g.grad(), x, approximate));
  if (!g.needs(1)) return;
  const Tensor x2 = mul(x, x);
  Tensor g2;
  if (kTanh) {
    const Tensor t = tanh(scale(x + scale(mul(x2, x), kKappa), kBeta));
    const Tensor slope = scale(scale(x2, 3.0 * kKappa) + 1.0, kBeta);
    g2 = mul(1.0 - mul(t, t),
             slope - mul(mul(x, t), mul(slope, slope)) + scale(x2, 3.0 * kBeta * kKappa));
  } else {
    g2 = mul(scale(exp(scale(x2, -0.5)), kPdf), 2.0 - x2);
  }
  g.add(1, mul(mul(g.grad(), dy), g2));
}

const OpDef kGeluBackward{.name = "gelu_backward",
                          .backward = backward_kernel<true>,
                          .saves = saves::kInput0 | saves::kInput1,
                          .grad_graph = grad_graph<true>};
TAPEGRAD_REGISTER_OP(kGeluBackward);

const OpDef kGeluErfBackward{.name = "gelu_erf_backward",
                             .backward = backward_kernel<false>,
                             .saves = saves::kInput0 | saves::kInput1,
                             .grad_graph = grad_graph<false>};
TAPEGRAD_REGISTER_OP(kGeluErfBackward);

}  // namespace

Tensor gelu_backward(const Tensor& dy, const Tensor& x, std::string_view approximate) {
  if (approximate != "none" && approximate != "tanh") {
    throw_binary_error(
        "gelu_backward", dy, "and", x,
        "approximate must be \"none\" or \"tanh\", got \"" + std::string(approximate) + "\"");
  }
  check_same_dtype("gelu_backward", dy, x);
  if (dy.shape() != x.shape()) throw_binary_error("gelu_backward", dy, "and", x, "shapes differ");
  const bool tanh_form = approximate == "tanh";
  Tensor z =
      x.tape().record(tanh_form ? kGeluBackward : kGeluErfBackward, x.shape(), x.dtype(), {dy, x});
  dispatch(z.dtype(), [&]<class T>() {
    T* out = output_data<T>(z);
    const int64_t n = z.numel();
    std::fill_n(out, n, T(0));
    first_derivative_times(tanh_form, x.data<T>(), dy.data<T>(), out, n);
  });
  return z;
}

}  // namespace tapegrad
