// gelu: torch.nn.functional.gelu, exact (erf, approximate='none') or the tanh approximation the
// book's GPT uses (approximate='tanh').
#include <cmath>
#include <numbers>
#include <string>

#include <tapegrad/graph/scope.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/ops/backward_ops.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/unary.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// Rough flops per element of the forward or backward (a tanh and a dozen multiply-adds), for
// parallel_for's decision to split.
constexpr double kGeluCost = 40.0;

// The forward's tanh(u), kept for the backward when the output needs a gradient (null when
// not): the backward then skips its own tanh, with the same bits (vmath.h).
struct GeluState {
  const void* tanh_u;
};

void gelu_backward(Tape& tape, const Node& node) {
  // Y = ½X(1 + tanh u), u = β(X + κX³)  =>  dX += dY·(½(1 + tanh u) + ½X(1 − tanh² u)·β(1 + 3κX²))
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    // torch's GeluBackward order of operations (vmath.h); elementwise, so split over the
    // threads with the same result.
    const T *xv = x.value_as<T>(), *dy = node.grad_as<T>();
    const T* tanh_u = static_cast<const T*>(node.state_as<GeluState>().tanh_u);
    parallel_for(x.shape.numel(), kGeluCost, [&](int, int64_t begin, int64_t end) {
      vmath::gelu_tanh_backward(xv + begin, dy + begin, dx + begin, end - begin,
                                tanh_u ? tanh_u + begin : nullptr);
    });
  });
}

void gelu_grad_graph(GradGraph& g) {
  // Y = GELU(X)  =>  dX += gelu_backward(dY, X), an op with its own derivatives
  g.add(0, gelu_backward(g.grad(), g.input(0), "tanh"));
}

const OpDef kGelu{.name = "gelu",
                  .backward = gelu_backward,
                  .saves = saves::kInput0,
                  .state_bytes =
                      [](const Tape&, const Node& n) {
                        return n.state_as<GeluState>().tanh_u ? static_cast<int64_t>(n.bytes())
                                                              : int64_t{0};
                      },
                  .grad_graph = gelu_grad_graph};
TAPEGRAD_REGISTER_OP(kGelu);

// 1/√2, as torch's kAlpha (M_SQRT1_2).
constexpr double kAlpha = std::numbers::sqrt2 / 2.0;

void gelu_erf_backward(Tape& tape, const Node& node) {
  // Y = X·Φ(X), Φ(X) = ½(1 + erf(X/√2))  =>  dX += dY·(Φ(X) + X·e^(−X²/2)/√(2π))
  unary_backward_from_input(tape, node,
                            []<class T>(T dy, T x) { return dy * gelu_erf_derivative(x); });
}

void gelu_erf_grad_graph(GradGraph& g) {
  // Y = X·Φ(X)  =>  dX += gelu_backward(dY, X), an op with its own derivatives
  g.add(0, gelu_backward(g.grad(), g.input(0), "none"));
}

// Drawn as "gelu_erf" beside the tanh approximation's "gelu" (the book's GPT drawings keep their
// name); torch names both GeluBackward0.
const OpDef kGeluErf{.name = "gelu_erf",
                     .backward = gelu_erf_backward,
                     .saves = saves::kInput0,
                     .grad_graph = gelu_erf_grad_graph};
TAPEGRAD_REGISTER_OP(kGeluErf);

}  // namespace

Tensor gelu(const Tensor& x, std::string_view approximate) {
  if (approximate == "none") {
    // The C library's erf where torch's float kernel calls its own vectorised erf: within a few
    // float32 ulps of torch's values.
    return unary_forward(kGeluErf, x, []<class T>(T v) {
      return v * T(0.5) * (T(1) + std::erf(v * static_cast<T>(kAlpha)));
    });
  }
  if (approximate != "tanh") {
    throw_unary_error(
        "gelu", x,
        "approximate must be \"none\" or \"tanh\", got \"" + std::string(approximate) + "\"");
  }
  void* tanh_u = x.requires_grad() && grad_enabled()
                     ? x.tape().arena().allocate(static_cast<size_t>(x.numel()) *
                                                 static_cast<size_t>(dtype_size(x.dtype())))
                     : nullptr;
  Tensor y = x.tape().record(kGelu, x.shape(), x.dtype(), {x}, GeluState{tanh_u});
  dispatch(y.dtype(), [&]<class T>() {
    // SLEEF's vectorised tanh, as torch's approximate='tanh' kernel (vmath.h); every element
    // goes through the same vector function wherever a part starts, so the split over the
    // threads leaves the result unchanged.
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    T* tv = static_cast<T*>(tanh_u);
    parallel_for(x.numel(), kGeluCost, [&](int, int64_t begin, int64_t end) {
      vmath::gelu_tanh(xv + begin, yv + begin, end - begin, tv ? tv + begin : nullptr);
    });
  });
  return y;
}

}  // namespace tapegrad
