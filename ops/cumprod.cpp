// cumprod: the running product along a dim (torch.cumprod), with the gradient where the input
// holds zeros (the products that leave each element out).
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/kernels/gemm/gemm_kernels.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dim.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct CumprodState {
  DimView view;
  int dim;
};

void cumprod_backward(Tape& tape, const Node& node) {
  // Y_k = Π_{i≤k} X_i  =>  dX_k += Σ_{j≥k} dY_j Π_{i≤j, i≠k} X_i: without zeros in the row,
  // (Σ_{j≥k} Y_j dY_j) / X_k (torch's reversed cumsum of Y ⊙ dY, divided); with zeros, the
  // products leaving X_k out, summed directly
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const DimView v = node.state_as<CumprodState>().view;
    const T* x = tape.input(node, 0).value_as<const T>();
    const T* y = node.value_as<const T>();
    const T* dy = node.grad_as<const T>();
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t base = o * v.size * v.inner + i;
        const auto at = [&](int64_t k) { return base + k * v.inner; };
        if (v.size == 1) {
          dx[at(0)] += dy[at(0)];
          continue;
        }
        bool zero = false;
        for (int64_t k = 0; k < v.size; ++k) zero = zero || x[at(k)] == T(0);
        if (!zero) {
          double acc = 0.0;
          for (int64_t k = v.size - 1; k >= 0; --k) {
            // The product rounded on its own, as torch's mul: not fused into the add (arm64).
            acc += detail::unfused(static_cast<double>(y[at(k)] * dy[at(k)]));
            dx[at(k)] += static_cast<T>(acc) / x[at(k)];
          }
          continue;
        }
        for (int64_t k = 0; k < v.size; ++k) {
          double before = 1.0;  // Π_{i<k} X_i
          for (int64_t e = 0; e < k; ++e) before *= static_cast<double>(x[at(e)]);
          double sum = 0.0;
          for (int64_t j = k; j < v.size; ++j) {
            if (j > k) before *= static_cast<double>(x[at(j)]);
            sum += detail::unfused(static_cast<double>(dy[at(j)]) * before);
          }
          dx[at(k)] += static_cast<T>(sum);
        }
      }
    }
  });
}

// Σ_{j≥k} w_j along dim, with ops: Σ_dim w − cumsum(w) + w.
Tensor reversed_cumsum(const Tensor& w, int dim) {
  const Shape shape = w.shape();
  return add(sub(expand(sum(w, dim, true), shape), cumsum(w, dim)), w);
}

void cumprod_grad_graph(GradGraph& g) {
  // Without zeros: dX += reversed_cumsum(Y ⊙ dY) / X. With zeros: X as [outer, k, j, inner]
  // with X_k set to 1, its cumprod along j (Π_{i≤j, i≠k} X_i), times dY_j, summed over j ≥ k
  const Tensor x = g.input(0);
  const Shape shape = x.shape();
  const int dim = g.state<CumprodState>().dim;
  const DimView v = g.state<CumprodState>().view;
  if (shape.rank() == 0 || v.size <= 1) {
    g.add(0, g.grad());
    return;
  }
  bool zero = false;
  for (const double e : x.values()) zero = zero || e == 0.0;
  if (!zero) {
    g.add(0, div(reversed_cumsum(mul(g.output(), g.grad()), dim), x));
    return;
  }
  const int64_t n = v.size;
  std::vector<double> eye(static_cast<size_t>(n * n)), below(static_cast<size_t>(n * n));
  for (int64_t k = 0; k < n; ++k) {
    eye[static_cast<size_t>(k * n + k)] = 1.0;
    for (int64_t j = 0; j < k; ++j) below[static_cast<size_t>(k * n + j)] = 1.0;
  }
  const Shape square{1, n, n, 1}, wide{v.outer, n, n, v.inner};
  const Tensor rows = expand(reshape(x, {v.outer, 1, n, v.inner}), wide);
  const Tensor left_out = cumprod(masked_fill(rows, from_values(square, eye, x.dtype()), 1.0), 2);
  const Tensor dy = expand(reshape(g.grad(), {v.outer, 1, n, v.inner}), wide);
  const Tensor terms = masked_fill(mul(dy, left_out), from_values(square, below, x.dtype()), 0.0);
  g.add(0, reshape(sum(terms, 2), shape.dims()));
}

const OpDef kCumprod{.name = "cumprod",
                     .backward = cumprod_backward,
                     .arguments =
                         [](const Tape& t, const Node& n) {
                           return dim_text(n.state_as<CumprodState>().dim,
                                           t.input(n, 0).shape.rank());
                         },
                     .saves = saves::kInput0 | saves::kOutput,
                     .grad_graph = cumprod_grad_graph};
TAPEGRAD_REGISTER_OP(kCumprod);

}  // namespace

Tensor cumprod(const Tensor& x, int dim) {
  const DimReduction r = plan_dim_reduction("cumprod", x, dim, true);
  Tensor y = x.tape().record(kCumprod, x.shape(), x.dtype(), {x}, CumprodState{r.view, r.dim});
  dispatch(y.dtype(), [&]<class T>() {
    // Accumulated in double, every output rounded to T, as torch's CPU kernel.
    const DimView v = r.view;
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        double acc = 1.0;
        for (int64_t k = 0; k < v.size; ++k) {
          const int64_t at = (o * v.size + k) * v.inner + i;
          acc *= static_cast<double>(in[at]);
          out[at] = static_cast<T>(acc);
        }
      }
    }
  });
  return y;
}

}  // namespace tapegrad
