// layer_norm: normalisation over the last dim with optional scale and shift (nn.LayerNorm).
#include <array>
#include <cmath>

#include "ops/detail/op_util.h"
#include "ops/ops.h"

namespace tapegrad {

namespace {

// Inputs: x, then weight when iattr[0], then bias when iattr[1]. Saved: mean [R], then rstd [R].
void layer_norm_backward(Tape& tape, const Node& node) {
  // Y = X̂·w + b, X̂ = (X − μ)·r  =>  dX += r·(G − mean(G) − X̂·mean(G·X̂)) with G = dY·w,
  //                                 dw += Σ_rows dY·X̂, db += Σ_rows dY  (means over the last dim)
  dispatch(node.dtype, [&]<class T>() {
    const bool has_weight = node.iattr[0] != 0, has_bias = node.iattr[1] != 0;
    const int64_t rows = node.iattr[2], cols = node.iattr[3];
    const Node& x = tape.input(node, 0);
    const T* mean = static_cast<const T*>(node.saved);
    const T* rstd = mean + rows;
    T* dx = tape.grad_for<T>(node, 0, x.shape);
    T* dw = has_weight ? tape.grad_for<T>(node, 1, Shape{cols}) : nullptr;
    T* db = has_bias ? tape.grad_for<T>(node, has_weight ? 2 : 1, Shape{cols}) : nullptr;
    const T* w = has_weight ? tape.input(node, 1).value_as<T>() : nullptr;
    ConstMatrixMap<T> X(x.value_as<T>(), rows, cols), dY(node.grad_as<T>(), rows, cols);
    for (int64_t i = 0; i < rows; ++i) {
      const auto xhat = [&](int64_t j) { return (X(i, j) - mean[i]) * rstd[i]; };
      if (dx != nullptr) {
        T sum_g = 0, sum_gx = 0;
        for (int64_t j = 0; j < cols; ++j) {
          const T g = w != nullptr ? dY(i, j) * w[j] : dY(i, j);
          sum_g += g;
          sum_gx += g * xhat(j);
        }
        const T mean_g = sum_g / static_cast<T>(cols), mean_gx = sum_gx / static_cast<T>(cols);
        T* dx_row = dx + i * cols;
        for (int64_t j = 0; j < cols; ++j) {
          const T g = w != nullptr ? dY(i, j) * w[j] : dY(i, j);
          dx_row[j] += rstd[i] * (g - mean_g - xhat(j) * mean_gx);
        }
      }
      if (dw != nullptr) {
        for (int64_t j = 0; j < cols; ++j) dw[j] += dY(i, j) * xhat(j);
      }
      if (db != nullptr) MatrixMap<T>(db, 1, cols) += dY.row(i);
    }
  });
}

const OpDef kLayerNorm{"layer_norm", layer_norm_backward};
TAPEGRAD_REGISTER_OP(kLayerNorm);

void check_affine(const Tensor& x, const Tensor& p, const char* role) {
  if (!p.defined()) return;
  if (p.dtype() != x.dtype()) {
    throw Error("layer_norm: " + describe("x", x) + " is " + dtype_name(x.dtype()) + " but " +
                describe(role, p) + " is " + dtype_name(p.dtype()));
  }
  const int64_t cols = x.size(-1);
  if (p.shape() != Shape{cols}) {
    throw Error("layer_norm: " + describe("x", x) + " and " + describe(role, p) + ": " + role +
                " must have shape " + Shape{cols}.str() + " (the last dim of x)");
  }
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  if (x.rank() == 0) throw_unary_error("layer_norm", x, "expected at least one dim");
  check_affine(x, weight, "weight");
  check_affine(x, bias, "bias");
  const int64_t cols = x.size(-1), rows = cols == 0 ? 0 : x.numel() / cols;
  std::array<Tensor, 3> inputs{x};
  size_t num_inputs = 1;
  if (weight.defined()) inputs[num_inputs++] = weight;
  if (bias.defined()) inputs[num_inputs++] = bias;
  Tensor y = x.tape().record(kLayerNorm, x.shape(), x.dtype(),
                             std::span<const Tensor>(inputs.data(), num_inputs));
  Node& n = y.tape().node(y.id());
  n.iattr = {weight.defined() ? 1 : 0, bias.defined() ? 1 : 0, rows, cols};
  n.attr[0] = eps;
  n.saved = y.tape().arena().allocate(static_cast<size_t>(2 * rows * dtype_size(x.dtype())));
  dispatch(y.dtype(), [&]<class T>() {
    T* mean = static_cast<T*>(n.saved);
    T* rstd = mean + rows;
    const T* w = weight.defined() ? value_of<T>(weight) : nullptr;
    const T* b = bias.defined() ? value_of<T>(bias) : nullptr;
    ConstMatrixMap<T> X(value_of<T>(x), rows, cols);
    MatrixMap<T> Y(value_of<T>(y), rows, cols);
    for (int64_t i = 0; i < rows; ++i) {
      // Two passes (mean, then the biased variance about it): no cancellation for large means.
      const T mu = X.row(i).sum() / static_cast<T>(cols);
      const T var = (X.row(i).array() - mu).square().sum() / static_cast<T>(cols);
      const T r = T(1) / std::sqrt(var + static_cast<T>(eps));
      mean[i] = mu;
      rstd[i] = r;
      for (int64_t j = 0; j < cols; ++j) {
        const T xhat = (X(i, j) - mu) * r;
        Y(i, j) = (w != nullptr ? xhat * w[j] : xhat) + (b != nullptr ? b[j] : T(0));
      }
    }
  });
  return y;
}

}  // namespace tapegrad
