// causal_mask: the book's masked_fill(triu(ones(T, T), diagonal=1).bool(), -inf), with no mask.
//
// Over the last two dims [.., Tq, Tk] (square in the book; any Tq, Tk allowed, as torch's triu of
// a non-square ones matrix): element (i, j) is filled when j > i and kept otherwise. The fill
// value is -inf unless given (a finite one lets finite differences check the backward).
#include <algorithm>
#include <cmath>
#include <limits>

#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/triangle.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct CausalMaskState {
  double value;  // the fill
};

void causal_mask_backward(Tape& tape, const Node& node) {
  // Y = where(j > i, value, X)  =>  dX += dY ⊙ [j ≤ i]
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* dy = node.grad_as<const T>();
    for_each_triangle_row(node.shape, 1, [&](int64_t row, int64_t split, int64_t) {
      ArrayMap<T>(dx + row, split) += ConstArrayMap<T>(dy + row, split);
    });
  });
}

void causal_mask_grad_graph(GradGraph& g) {
  // Y = where(j > i, value, X)  =>  dX += causal_mask(dY, 0)
  g.add(0, causal_mask(g.grad(), 0.0));
}

const OpDef kCausalMask{
    .name = "causal_mask",
    .backward = causal_mask_backward,
    .arguments =
        [](const Tape&, const Node& n) {
          return "triu(1) → " + number_text(n.state_as<CausalMaskState>().value);
        },
    // An infinite fill (the mask's -inf) is meant: anomaly mode does not report it.
    .writes_inf = [](const Node& n) { return std::isinf(n.state_as<CausalMaskState>().value); },
    .grad_graph = causal_mask_grad_graph};
TAPEGRAD_REGISTER_OP(kCausalMask);

}  // namespace

Tensor causal_mask(const Tensor& x, double value) {
  if (x.rank() < 2) {
    throw_unary_error("causal_mask", x, "expected at least 2 dims [.., Tq, Tk]");
  }
  if (x.dtype() == DType::Float32 && std::isfinite(value) &&
      std::abs(value) > static_cast<double>(std::numeric_limits<float>::max())) {
    throw_unary_error("causal_mask", x, "value " + std::to_string(value) + " overflows float32");
  }
  Tensor y = x.tape().record(kCausalMask, x.shape(), x.dtype(), {x}, CausalMaskState{value});
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    const T fill = static_cast<T>(value);
    for_each_triangle_row(x.shape(), 1, [&](int64_t row, int64_t split, int64_t cols) {
      std::copy(xv + row, xv + row + split, yv + row);
      std::fill(yv + row + split, yv + row + cols, fill);
    });
  });
  return y;
}

}  // namespace tapegrad
