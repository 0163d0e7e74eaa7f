// prod and prod_dim: the product of all elements, or along one dim (torch.prod), with torch's
// gradient where the input holds zeros (the product of the other elements).
#include <type_traits>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dim.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct ProdDimState {
  DimView view;
  int dim;
};

// dX += dY ⊙ Π_{j≠k} X_j along each [outer, size, inner] row: torch's prod_safe_zeros_backward,
// the exclusive cumulative products from both ends (each rounded to T, accumulated in double as
// torch's cumprod), multiplied.
template <class T>
void add_others_product(const DimView& v, const T* x, const T* dy, T* dx) {
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      const T* row = x + o * v.size * v.inner + i;
      T* drow = dx + o * v.size * v.inner + i;
      const T g = dy[o * v.inner + i];
      std::vector<T> before(static_cast<size_t>(v.size)), after(static_cast<size_t>(v.size));
      double acc = 1.0;
      for (int64_t k = 0; k < v.size; ++k) {
        before[static_cast<size_t>(k)] = static_cast<T>(acc);
        acc *= static_cast<double>(row[k * v.inner]);
      }
      acc = 1.0;
      for (int64_t k = v.size - 1; k >= 0; --k) {
        after[static_cast<size_t>(k)] = static_cast<T>(acc);
        acc *= static_cast<double>(row[k * v.inner]);
      }
      for (int64_t k = 0; k < v.size; ++k) {
        drow[k * v.inner] += g * (before[static_cast<size_t>(k)] * after[static_cast<size_t>(k)]);
      }
    }
  }
}

template <class T>
int64_t count_zeros(const T* x, int64_t n) {
  int64_t zeros = 0;
  for (int64_t i = 0; i < n; ++i) zeros += x[i] == T(0);
  return zeros;
}

// The product of the other elements along `dim`, written with ops (for the recorded backwards):
// x as [outer, 1, n, inner] broadcast to [outer, n, n, inner], its diagonal set to 1, then the
// product along the last n. Quadratic in n; only the zeros case of a second derivative uses it.
Tensor others_product(const Tensor& x, int dim) {
  const Shape shape = x.shape();
  const DimView v = view_around(shape, dim);
  const Tensor rows =
      expand(reshape(x, {v.outer, 1, v.size, v.inner}), {v.outer, v.size, v.size, v.inner});
  std::vector<double> eye(static_cast<size_t>(v.size * v.size));
  for (int64_t k = 0; k < v.size; ++k) eye[static_cast<size_t>(k * v.size + k)] = 1.0;
  const Tensor diagonal = from_values(Shape{1, v.size, v.size, 1}, eye, x.dtype());
  return reshape(prod(masked_fill(rows, diagonal, 1.0), 2), shape.dims());
}

// dX += dY_b ⊙ Y_b / X, or dY_b ⊙ (product of the others) when X holds a zero, with ops.
Tensor prod_gradient(const Tensor& x, const Tensor& y_kept, const Tensor& dy_kept, int dim) {
  const Shape shape = x.shape();
  const std::vector<double> values = x.values();
  bool zero = false;
  for (const double e : values) zero = zero || e == 0.0;
  const Tensor dy = expand(dy_kept, shape);
  if (!zero) return mul(dy, div(expand(y_kept, shape), x));
  return mul(dy, others_product(x, dim));
}

void prod_backward(Tape& tape, const Node& node) {
  // y = Π X  =>  dX += dy ⊙ (y / X) without zeros; with one zero, dy ⊙ Π_{j≠k} X_j; with more,
  // 0 (torch's prod_backward)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const Node& x = tape.input(node, 0);
    const T* xv = x.value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const int64_t n = x.shape.numel();
    if (x.shape.rank() == 0) {
      dx[0] += dy[0];
      return;
    }
    const int64_t zeros = count_zeros(xv, n);
    if (zeros == 0) {
      const T y = node.value_as<const T>()[0];
      for (int64_t i = 0; i < n; ++i) dx[i] += dy[0] * (y / xv[i]);
    } else if (zeros == 1) {
      add_others_product<T>(DimView{1, n, 1}, xv, dy, dx);
    }
  });
}

void prod_grad_graph(GradGraph& g) {
  // y = Π X  =>  dX += dy ⊙ (y / X), or dy ⊙ Π_{j≠k} X_j when X holds zeros
  const Tensor x = g.input(0);
  const Shape shape = x.shape();
  if (shape.rank() == 0) {
    g.add(0, g.grad());
    return;
  }
  const Tensor flat = reshape(x, {shape.numel()});
  g.add(0, reshape(prod_gradient(flat, g.output(), g.grad(), 0), shape.dims()));
}

void prod_dim_backward(Tape& tape, const Node& node) {
  // Y = Π_dim X  =>  dX += dY ⊙ (Y / X) broadcast along dim; when X holds any zero,
  // dY ⊙ Π_{j≠k} X_j along dim (torch's prod_backward)
  dispatch(node.dtype, [&]<class T>() {
    const auto [dx, xv, yv, dy] = unary_grad<T>(tape, node);
    if (dx == nullptr) return;
    const Node& x = tape.input(node, 0);
    const DimView v = node.state_as<ProdDimState>().view;
    if (x.shape.rank() == 0) {
      dx[0] += dy[0];
    } else if (count_zeros(xv, x.shape.numel()) == 0 && v.inner == 1) {
      for (int64_t o = 0; o < v.outer; ++o) {
        const T* row = xv + o * v.size;
        T* drow = dx + o * v.size;
        const T d = dy[o], y = yv[o];
        for (int64_t k = 0; k < v.size; ++k) drow[k] += d * (y / row[k]);
      }
    } else if (count_zeros(xv, x.shape.numel()) == 0) {
      for_each_reduced(v, [&](int64_t o, int64_t i, int64_t) { dx[i] += dy[o] * (yv[o] / xv[i]); });
    } else if (v.size == 1) {
      for_each_reduced(v, [&](int64_t o, int64_t i, int64_t) { dx[i] += dy[o]; });
    } else {
      add_others_product<T>(v, xv, dy, dx);
    }
  });
}

void prod_dim_grad_graph(GradGraph& g) {
  // Y = Π_dim X  =>  dX += dY ⊙ (Y / X), or dY ⊙ Π_{j≠k} X_j along dim when X holds zeros
  const Tensor x = g.input(0);
  const Shape shape = x.shape();
  if (shape.rank() == 0) {
    g.add(0, g.grad());
    return;
  }
  const int dim = g.state<ProdDimState>().dim;
  g.add(0, prod_gradient(x, keepdim_view(g.output(), shape, dim),
                         keepdim_view(g.grad(), shape, dim), dim));
}

const OpDef kProd{.name = "prod",
                  .backward = prod_backward,
                  .saves = saves::kInput0 | saves::kOutput,
                  .grad_graph = prod_grad_graph};
const OpDef kProdDim{.name = "prod_dim",
                     .backward = prod_dim_backward,
                     .arguments =
                         [](const Tape& t, const Node& n) {
                           return reduction_text(n.state_as<ProdDimState>().dim, t.input(n, 0), n);
                         },
                     .saves = saves::kInput0 | saves::kOutput,
                     .grad_graph = prod_dim_grad_graph};
TAPEGRAD_REGISTER_OP(kProd);
TAPEGRAD_REGISTER_OP(kProdDim);

}  // namespace

Tensor prod(const Tensor& x) {
  Tensor y = x.tape().record(kProd, Shape{}, x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    // In double, rounded once; an empty x gives 1, as torch.
    const T* in = x.data<T>();
    double acc = 1.0;
    for (int64_t i = 0; i < x.numel(); ++i) acc *= static_cast<double>(in[i]);
    output_data<T>(y)[0] = static_cast<T>(acc);
  });
  return y;
}

Tensor prod(const Tensor& x, int dim, bool keepdim) {
  const DimReduction r = plan_dim_reduction("prod_dim", x, dim, keepdim);
  Tensor y = x.tape().record(kProdDim, r.out_shape, x.dtype(), {x}, ProdDimState{r.view, r.dim});
  dispatch(y.dtype(), [&]<class T>() {
    const int64_t n_out = y.numel();
    double* acc = y.tape().arena().allocate_array<double>(n_out);
    for (int64_t o = 0; o < n_out; ++o) acc[o] = 1.0;
    const T* in = x.data<T>();
    if (r.view.inner == 1 && std::is_same_v<T, float>) {
      // float32 rows: eight running products a vector wide (lane j takes k ≡ j mod 8),
      // multiplied in lane order, then the tail; the double products round to the same float
      // but where they straddle a float's rounding boundary.
      const int64_t n = r.view.size;
      for (int64_t o = 0; o < n_out; ++o) {
        const T* row = in + o * n;
        double lane[8] = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
        int64_t k = 0;
        for (; k + 8 <= n; k += 8) {
          for (int j = 0; j < 8; ++j) lane[j] *= static_cast<double>(row[k + j]);
        }
        double total = 1.0;
        for (double l : lane) total *= l;
        for (; k < n; ++k) total *= static_cast<double>(row[k]);
        acc[o] = total;
      }
    } else {
      for_each_reduced(r.view, [&](int64_t o, int64_t i, int64_t) { acc[o] *= in[i]; });
    }
    T* out = output_data<T>(y);
    for (int64_t o = 0; o < n_out; ++o) out[o] = static_cast<T>(acc[o]);
  });
  return y;
}

}  // namespace tapegrad
