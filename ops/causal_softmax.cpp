// causal_softmax: softmax(causal_mask(x) / divisor, -1) fused into one pass over each row.
//
// Row i of a [.., Tq, Tk] slice keeps columns j <= i (as causal_mask's triu(ones, 1) fill), so
// only those are read, divided, exponentiated and summed; the rest of the row is written as 0,
// which is exactly what exp(-inf - max) gives in the composed ops. Arithmetic per kept entry as
// the composed ops (torch's): x / divisor in the tensor's dtype, then the softmax op's row
// function over the kept entries (max, e = exp(x - max), s = 1 / Σ e, y = e * s); only the order
// of the sum differs (the masked zeros are not added, so the lanes group other entries).
#include <algorithm>
#include <cmath>
#include <string>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// The number of kept entries in row `row` of a [.., tq, tk] tensor: j <= i.
inline int64_t kept(int64_t row, int64_t tq, int64_t tk) {
  return std::min(row % tq + 1, tk);
}

struct CausalSoftmaxState {
  double divisor;
};

void causal_softmax_backward(Tape& tape, const Node& node) {
  // Y = softmax(mask(X) / c)  =>  dX += [j ≤ i] · Y ⊙ (dY − Σ_j dY ⊙ Y) / c   (reads only Y)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const int64_t tk = node.shape[node.shape.rank() - 1];
    const int64_t tq = node.shape[node.shape.rank() - 2];
    if (tk == 0 || tq == 0) return;
    const int64_t rows = node.shape.numel() / tk;
    const T c = static_cast<T>(node.state_as<CausalSoftmaxState>().divisor);
    const T* y = node.value_as<const T>();
    const T* dy = node.grad_as<const T>();
    parallel_for(rows, 8.0 * static_cast<double>(tk), [&](int, int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t n = kept(r, tq, tk), off = r * tk;
        ConstArrayMap<T> yr(y + off, n), dyr(dy + off, n);
        const T s = (dyr * yr).sum();
        ArrayMap<T>(dx + off, n) += (yr * (dyr - s)) / c;
      }
    });
  });
}

void causal_softmax_grad_graph(GradGraph& g) {
  // Y = softmax(mask(X) / c), recorded as those ops (its second derivative is theirs)
  const double divisor = g.state<CausalSoftmaxState>().divisor;
  grad_through(g, [&](std::span<const Tensor> in) {
    return softmax(div_scalar(causal_mask(in[0]), divisor), -1);
  });
}

const OpDef kCausalSoftmax{.name = "causal_softmax",
                           .backward = causal_softmax_backward,
                           .arguments =
                               [](const Tape&, const Node& n) {
                                 return "÷ " +
                                        number_text(n.state_as<CausalSoftmaxState>().divisor);
                               },
                           .saves = saves::kOutput,
                           .grad_graph = causal_softmax_grad_graph};
TAPEGRAD_REGISTER_OP(kCausalSoftmax);

}  // namespace

Tensor causal_softmax(const Tensor& scores, double divisor) {
  if (scores.rank() < 2) {
    throw_unary_error("causal_softmax", scores, "expected at least 2 dims [.., Tq, Tk]");
  }
  if (!(divisor != 0.0) || !std::isfinite(divisor)) {
    throw_unary_error("causal_softmax", scores,
                      "divisor must be finite and nonzero (got " + std::to_string(divisor) + ")");
  }
  Tensor y = scores.tape().record(kCausalSoftmax, scores.shape(), scores.dtype(), {scores},
                                  CausalSoftmaxState{divisor});
  const int64_t tk = scores.shape()[scores.rank() - 1];
  const int64_t tq = scores.shape()[scores.rank() - 2];
  if (tk == 0 || tq == 0) return y;
  const int64_t rows = scores.numel() / tk;
  dispatch(y.dtype(), [&]<class T>() {
    const T* x = scores.data<T>();
    T* out = output_data<T>(y);
    const T c = static_cast<T>(divisor);
    parallel_for(rows, 20.0 * static_cast<double>(tk), [&](int, int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t n = kept(r, tq, tk), off = r * tk;
        ArrayMap<T>(out + off, n) = ConstArrayMap<T>(x + off, n) / c;
        vmath::softmax_rows(out + off, out + off, 1, n);  // the softmax op's row
        std::fill(out + off + n, out + off + tk, T(0));
      }
    });
  });
  return y;
}

}  // namespace tapegrad
