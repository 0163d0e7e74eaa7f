// layer_norm: normalisation over the last dim with optional scale and shift (nn.LayerNorm).
#include <array>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct LayerNormState {
  double eps;
  bool has_weight, has_bias;  // the inputs: x, then the weight and the bias when given
  int64_t rows, cols;         // x as [rows, cols], cols its last dim
  const void* mean;           // [rows] then 1/std [rows], in x's dtype, from the tape's arena
};

// Rough flops per element of a row (forward or backward), for parallel_for's decision to split.
constexpr double kRowCost = 10.0;

const auto state = [](const Node& n) -> const LayerNormState& {
  return n.state_as<LayerNormState>();
};

void layer_norm_backward(Tape& tape, const Node& node) {
  // Y = X̂·w + b, X̂ = (X − μ)·r  =>  dX += r·(G − mean(G) − X̂·mean(G·X̂)) with G = dY·w,
  //                                 dw += Σ_rows dY·X̂, db += Σ_rows dY  (means over the last dim)
  dispatch(node.dtype, [&]<class T>() {
    const auto& [eps, has_weight, has_bias, rows, cols, stats] = state(node);
    const T *mean = static_cast<const T*>(stats), *rstd = mean + rows;
    T* dx = tape.input_grad<T>(node, 0).to_add();
    T* dw = has_weight ? tape.input_grad<T>(node, 1).to_add() : nullptr;
    T* db = has_bias ? tape.input_grad<T>(node, has_weight ? 2 : 1).to_add() : nullptr;
    const T* w = has_weight ? tape.input(node, 1).value_as<T>() : nullptr;
    const T *x = tape.input(node, 0).value_as<T>(), *dy = node.grad_as<T>();
    if (dx != nullptr) {
      // dX row by row, the rows split over the threads (a row's arithmetic is the same whoever
      // computes it).
      parallel_for(rows, kRowCost * static_cast<double>(cols), [&](int, int64_t r0, int64_t r1) {
        vmath::layer_norm_rows_backward(x + r0 * cols, w, mean + r0, rstd + r0, dy + r0 * cols,
                                        dx + r0 * cols, nullptr, nullptr, r1 - r0, cols);
      });
    }
    // dw and db sum over the rows: on the calling thread, in row order, so the same sums
    // whatever the thread count.
    if (dw != nullptr || db != nullptr) {
      vmath::layer_norm_rows_backward(x, w, mean, rstd, dy, nullptr, dw, db, rows, cols);
    }
  });
}

// Saves x, and the weight when there is one (the bias is not read).
void layer_norm_grad_graph(GradGraph& g) {
  // Y = (X − μ)/√(σ² + ε)·w + b, recorded as those ops (its second derivative is theirs)
  const LayerNormState s = state(g.node());
  grad_through(g, [&](std::span<const Tensor> in) {
    const Tensor centred = in[0] - mean(in[0], -1, true);
    const Tensor var = mean(mul(centred, centred), -1, true);
    Tensor y = div(centred, sqrt(var + s.eps));
    if (s.has_weight) y = mul(y, in[1]);
    if (s.has_bias) y = add(y, in[s.has_weight ? 2 : 1]);
    return y;
  });
}

const OpDef kLayerNorm{
    .name = "layer_norm",
    .backward = layer_norm_backward,
    .arguments = [](const Tape&, const Node& n) { return "eps " + number_text(state(n).eps); },
    .state_bytes = [](const Tape&,
                      const Node& n) { return 2 * state(n).rows * dtype_size(n.dtype); },
    .saves_of =
        [](const Node& n) { return saves::kInput0 | (state(n).has_weight ? saves::kInput1 : 0u); },
    .grad_graph = layer_norm_grad_graph};
TAPEGRAD_REGISTER_OP(kLayerNorm);

void check_affine(const Tensor& x, const Tensor& p, const char* role) {
  if (!p.defined()) return;
  if (p.dtype() != x.dtype()) {
    throw Error("layer_norm: " + describe("x", x) + " is " + dtype_name(x.dtype()) + " but " +
                describe(role, p) + " is " + dtype_name(p.dtype()));
  }
  if (p.shape() != Shape{x.size(-1)}) {
    throw Error("layer_norm: " + describe("x", x) + " and " + describe(role, p) + ": " + role +
                " must have shape " + Shape{x.size(-1)}.str() + " (the last dim of x)");
  }
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  if (x.rank() == 0) throw_unary_error("layer_norm", x, "expected at least one dim");
  if (!(eps >= 0.0))
    throw_unary_error("layer_norm", x, "eps must be >= 0, got " + number_text(eps));
  check_affine(x, weight, "weight");
  check_affine(x, bias, "bias");
  const int64_t cols = x.size(-1), rows = cols == 0 ? 0 : x.numel() / cols;
  std::array<Tensor, 3> inputs{x};
  size_t num_inputs = 1;
  if (weight.defined()) inputs[num_inputs++] = weight;
  if (bias.defined()) inputs[num_inputs++] = bias;
  void* stats = x.tape().arena().allocate(static_cast<size_t>(2 * rows * dtype_size(x.dtype())));
  Tensor y = x.tape().record(
      kLayerNorm, x.shape(), x.dtype(), std::span<const Tensor>(inputs.data(), num_inputs),
      LayerNormState{eps, weight.defined(), bias.defined(), rows, cols, stats});
  dispatch(y.dtype(), [&]<class T>() {
    T *mean = static_cast<T*>(stats), *rstd = mean + rows;
    const T* w = weight.defined() ? weight.data<T>() : nullptr;
    const T* b = bias.defined() ? bias.data<T>() : nullptr;
    // Two passes per row (the mean, then the biased variance about it: no cancellation for
    // large means), vectorised in vmath::layer_norm_rows.
    // Rows split over the threads; each row is normalised whole by one of them.
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    parallel_for(rows, kRowCost * static_cast<double>(cols), [&](int, int64_t r0, int64_t r1) {
      vmath::layer_norm_rows(xv + r0 * cols, w, b, yv + r0 * cols, mean + r0, rstd + r0, r1 - r0,
                             cols, eps);
    });
  });
  return y;
}

}  // namespace tapegrad
