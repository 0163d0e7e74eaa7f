// masked_fill: x with `value` wherever a (broadcast) mask is nonzero, torch's masked_fill.
//
// The mask may be float32 or float64 whatever x's dtype: nonzero (NaN included) means "fill".
// It broadcasts to x but may not enlarge it (torch 1.13's out-of-place masked_fill would return
// the larger shape; here that is an error, since the op is for masking x). The mask is read
// again in backward, not copied; it never receives a gradient, even when it requires grad.
#include <cmath>
#include <limits>

#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// Calls f(x_index, mask_index) for every element of x, with the mask broadcast to x's shape.
template <class F>
void for_each_masked(const Shape& x_shape, const Shape& mask_shape, F&& f) {
  const Strides own = broadcast_strides(x_shape, x_shape);
  const Strides mask_strides = broadcast_strides(mask_shape, x_shape);
  for_each_broadcast(x_shape, own, mask_strides, [&](int64_t, int64_t i, int64_t m) { f(i, m); });
}

struct MaskedFillState {
  double value;  // the fill
};

void masked_fill_backward(Tape& tape, const Node& node) {
  // Y = where(M ≠ 0, value, X)  =>  dX += dY ⊙ (M = 0); M gets no gradient
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    const Node& mask = tape.input(node, 1);
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* dy = node.grad_as<const T>();
    dispatch(mask.dtype, [&]<class M>() {
      const M* m = mask.value_as<const M>();
      for_each_masked(x.shape, mask.shape, [&](int64_t i, int64_t k) {
        if (m[k] == M(0)) dx[i] += dy[i];
      });
    });
  });
}

void masked_fill_grad_graph(GradGraph& g) {
  // Y = where(M ≠ 0, value, X)  =>  dX += dY ⊙ (M = 0); M gets no gradient
  g.add(0, masked_fill(g.grad(), g.input(1), 0.0));
}

const OpDef kMaskedFill{
    .name = "masked_fill",
    .backward = masked_fill_backward,
    .arguments =
        [](const Tape&, const Node& n) {
          return "value " + number_text(n.state_as<MaskedFillState>().value);
        },
    .saves = saves::kInput1,
    // An infinite fill (the mask's -inf) is meant: anomaly mode does not report it.
    .writes_inf = [](const Node& n) { return std::isinf(n.state_as<MaskedFillState>().value); },
    .grad_graph = masked_fill_grad_graph};
TAPEGRAD_REGISTER_OP(kMaskedFill);

}  // namespace

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  bool ok = false;
  const Shape out = broadcast_shape(x.shape(), mask.shape(), &ok);
  if (!ok || out != x.shape()) {
    throw Error("masked_fill: " + describe("x", x) + ", " + describe("mask", mask) +
                ": the mask must broadcast to x's shape" +
                (ok ? " (it would enlarge x to " + out.str() + ")" : ""));
  }
  if (x.dtype() == DType::Float32 && std::isfinite(value) &&
      std::abs(value) > static_cast<double>(std::numeric_limits<float>::max())) {
    throw_unary_error("masked_fill", x, "value " + std::to_string(value) + " overflows float32");
  }
  Tensor y = x.tape().record(kMaskedFill, x.shape(), x.dtype(), {x, mask}, MaskedFillState{value});
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    const T fill = static_cast<T>(value);
    dispatch(mask.dtype(), [&]<class M>() {
      const M* m = mask.data<M>();
      for_each_masked(x.shape(), mask.shape(),
                      [&](int64_t i, int64_t k) { yv[i] = m[k] != M(0) ? fill : xv[i]; });
    });
  });
  return y;
}

}  // namespace tapegrad
