// rms_norm: root-mean-square normalisation over the last dim with an optional scale and shift
// (the RMSNorm of the book's qwen3.py and torch.nn.RMSNorm).
#include <array>
#include <cmath>

#include <tapegrad/graph/threads.h>
#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct RmsNormState {
  double eps;
  bool has_weight, has_bias;  // the inputs: x, then the weight and the bias when given
  int64_t rows, cols;         // x as [rows, cols], cols its last dim
  const void* rstd;           // [rows] 1/√(mean(x²) + eps), in x's dtype, from the tape's arena
};

// Rough flops per element of a row, for parallel_for's decision to split.
constexpr double kRowCost = 6.0;

const auto state = [](const Node& n) -> const RmsNormState& { return n.state_as<RmsNormState>(); };

// One row forward, in the book's order of roundings: x², their mean, + eps, rsqrt (1/√, as
// torch's rsqrt divides), then (x·r)·w + b. The sum of squares is accumulated in double so that
// the mean is the correctly rounded one, whatever order torch's vectorised sum took.
template <class T>
void forward_row(const T* x, const T* w, const T* b, T* y, T* rstd, int64_t cols, double eps) {
  double sum = 0.0;
  for (int64_t j = 0; j < cols; ++j) sum += static_cast<double>(x[j] * x[j]);
  const T mean_square = static_cast<T>(sum / static_cast<double>(cols));
  const T r = T(1) / std::sqrt(static_cast<T>(mean_square + static_cast<T>(eps)));
  *rstd = r;
  for (int64_t j = 0; j < cols; ++j) {
    T v = x[j] * r;
    if (w != nullptr) v = v * w[j];
    if (b != nullptr) v = v + b[j];
    y[j] = v;
  }
}

void rms_norm_backward(Tape& tape, const Node& node) {
  // Y = X̂·w + b, X̂ = X·r, r = (mean(X²) + ε)^(-1/2)  =>  dX += r·(G − X̂·mean(G·X̂)) with
  // G = dY·w; dw += Σ_rows dY·X̂; db += Σ_rows dY  (means over the last dim)
  dispatch(node.dtype, [&]<class T>() {
    const auto& [eps, has_weight, has_bias, rows, cols, saved] = state(node);
    const T* rstd = static_cast<const T*>(saved);
    T* dx = tape.input_grad<T>(node, 0).to_add();
    T* dw = has_weight ? tape.input_grad<T>(node, 1).to_add() : nullptr;
    T* db = has_bias ? tape.input_grad<T>(node, has_weight ? 2 : 1).to_add() : nullptr;
    const T* w = has_weight ? tape.input(node, 1).value_as<T>() : nullptr;
    const T *x = tape.input(node, 0).value_as<T>(), *dy = node.grad_as<T>();
    if (dx != nullptr) {
      parallel_for(rows, kRowCost * static_cast<double>(cols), [&](int, int64_t r0, int64_t r1) {
        for (int64_t i = r0; i < r1; ++i) {
          const T *xi = x + i * cols, *dyi = dy + i * cols;
          const double r = static_cast<double>(rstd[i]);
          double dot = 0.0;  // Σ_j G·X̂
          for (int64_t j = 0; j < cols; ++j) {
            const double g = static_cast<double>(dyi[j]) * (w ? static_cast<double>(w[j]) : 1.0);
            dot += g * static_cast<double>(xi[j]) * r;
          }
          const double mean_gx = dot / static_cast<double>(cols);
          for (int64_t j = 0; j < cols; ++j) {
            const double g = static_cast<double>(dyi[j]) * (w ? static_cast<double>(w[j]) : 1.0);
            const double xhat = static_cast<double>(xi[j]) * r;
            dx[i * cols + j] += static_cast<T>(r * (g - xhat * mean_gx));
          }
        }
      });
    }
    // dw and db sum over the rows on the calling thread, in row order: the same sums whatever
    // the thread count.
    for (int64_t i = 0; i < rows && (dw != nullptr || db != nullptr); ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        const T g = dy[i * cols + j];
        if (dw != nullptr) dw[j] += g * (x[i * cols + j] * rstd[i]);
        if (db != nullptr) db[j] += g;
      }
    }
  });
}

// Saves x, and the weight when there is one (the bias is not read).
void rms_norm_grad_graph(GradGraph& g) {
  // Y = X·rsqrt(mean(X²) + ε)·w + b, recorded as those ops (its second derivative is theirs)
  const RmsNormState s = state(g.node());
  grad_through(g, [&](std::span<const Tensor> in) {
    Tensor y = mul(in[0], rsqrt(mean(mul(in[0], in[0]), -1, true) + s.eps));
    if (s.has_weight) y = mul(y, in[1]);
    if (s.has_bias) y = add(y, in[s.has_weight ? 2 : 1]);
    return y;
  });
}

const OpDef kRmsNorm{
    .name = "rms_norm",
    .backward = rms_norm_backward,
    .arguments = [](const Tape&, const Node& n) { return "eps " + number_text(state(n).eps); },
    .state_bytes = [](const Tape&, const Node& n) { return state(n).rows * dtype_size(n.dtype); },
    .saves_of =
        [](const Node& n) { return saves::kInput0 | (state(n).has_weight ? saves::kInput1 : 0u); },
    .grad_graph = rms_norm_grad_graph};
TAPEGRAD_REGISTER_OP(kRmsNorm);

void check_affine(const Tensor& x, const Tensor& p, const char* role) {
  if (!p.defined()) return;
  if (p.dtype() != x.dtype()) {
    throw Error("rms_norm: " + describe("x", x) + " is " + dtype_name(x.dtype()) + " but " +
                describe(role, p) + " is " + dtype_name(p.dtype()));
  }
  if (p.shape() != Shape{x.size(-1)}) {
    throw Error("rms_norm: " + describe("x", x) + " and " + describe(role, p) + ": " + role +
                " must have shape " + Shape{x.size(-1)}.str() + " (the last dim of x)");
  }
}

}  // namespace

Tensor rms_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  if (x.rank() == 0) throw_unary_error("rms_norm", x, "expected at least one dim");
  if (!(eps >= 0.0)) throw_unary_error("rms_norm", x, "eps must be >= 0, got " + number_text(eps));
  check_affine(x, weight, "weight");
  check_affine(x, bias, "bias");
  const int64_t cols = x.size(-1), rows = cols == 0 ? 0 : x.numel() / cols;
  std::array<Tensor, 3> inputs{x};
  size_t num_inputs = 1;
  if (weight.defined()) inputs[num_inputs++] = weight;
  if (bias.defined()) inputs[num_inputs++] = bias;
  void* rstd = x.tape().arena().allocate(static_cast<size_t>(rows * dtype_size(x.dtype())));
  Tensor y = x.tape().record(kRmsNorm, x.shape(), x.dtype(),
                             std::span<const Tensor>(inputs.data(), num_inputs),
                             RmsNormState{eps, weight.defined(), bias.defined(), rows, cols, rstd});
  dispatch(y.dtype(), [&]<class T>() {
    const T* w = weight.defined() ? weight.data<T>() : nullptr;
    const T* b = bias.defined() ? bias.data<T>() : nullptr;
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    T* r = static_cast<T*>(rstd);
    parallel_for(rows, kRowCost * static_cast<double>(cols), [&](int, int64_t r0, int64_t r1) {
      for (int64_t i = r0; i < r1; ++i) {
        forward_row(xv + i * cols, w, b, yv + i * cols, r + i, cols, eps);
      }
    });
  });
  return y;
}

}  // namespace tapegrad
