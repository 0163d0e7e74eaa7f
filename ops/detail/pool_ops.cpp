// The pooling ops' shared checks, state and backwards (pool_ops.h).
#include <tapegrad/ops/detail/pool_ops.h>

#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

std::string pair_text(int spatial, int64_t h, int64_t w) {
  if (spatial == 1) return std::to_string(w);
  return "[" + std::to_string(h) + ", " + std::to_string(w) + "]";
}

// torch's pooling_output_shape: floor (or, with ceil_mode, ceil) division, and with ceil_mode no
// window that starts in the right padding.
int64_t pooled_size(int64_t in, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation,
                    bool ceil_mode) {
  const int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  const int64_t q = span >= 0 ? span / stride : -((-span + stride - 1) / stride);
  int64_t out = q + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// Checks x's rank and non-batch sizes; returns the geometry's planes and input sizes.
pool::Geometry input_geometry(const char* op, const Tensor& x, int spatial) {
  const int rank = x.rank();
  const int batched = spatial + 2, unbatched = spatial + 1;
  if (rank != batched && rank != unbatched) {
    const char* layout = spatial == 2 ? "[N, C, H, W] or [C, H, W]" : "[N, C, L] or [C, L]";
    throw_unary_error(op, x,
                      "expected a " + std::to_string(unbatched) + "-D (unbatched) or " +
                          std::to_string(batched) + "-D (batched) input, " + layout +
                          ", got rank " + std::to_string(rank));
  }
  const Shape s = x.shape();
  for (int d = rank - unbatched; d < rank; ++d) {
    if (s[d] == 0) throw_unary_error(op, x, "its dims other than the batch dim must not be 0");
  }
  pool::Geometry g;
  g.in_w = s[rank - 1];
  g.in_h = spatial == 2 ? s[rank - 2] : 1;
  g.planes = x.numel() / (g.in_h * g.in_w);
  return g;
}

Shape output_shape(const Tensor& x, int spatial, int64_t out_h, int64_t out_w) {
  Shape out = x.shape();
  out[x.rank() - 1] = out_w;
  if (spatial == 2) out[x.rank() - 2] = out_h;
  return out;
}

}  // namespace

PoolPlan plan_pool(const char* op, const Tensor& x, int spatial, const PoolArgs& a) {
  pool::Geometry g = input_geometry(op, x, spatial);
  const auto check_positive = [&](const char* name, int64_t h, int64_t w) {
    if (h < 1 || w < 1) {
      throw_unary_error(op, x,
                        std::string(name) + " " + pair_text(spatial, h, w) + " must be positive");
    }
  };
  check_positive("kernel_size", a.kernel_h, a.kernel_w);
  check_positive("stride", a.stride_h, a.stride_w);
  check_positive("dilation", a.dilation_h, a.dilation_w);
  if (a.pad_h < 0 || a.pad_w < 0) {
    throw_unary_error(op, x,
                      "padding " + pair_text(spatial, a.pad_h, a.pad_w) + " must not be negative");
  }
  if (a.pad_h > a.kernel_h / 2 || a.pad_w > a.kernel_w / 2) {
    throw_unary_error(op, x,
                      "padding " + pair_text(spatial, a.pad_h, a.pad_w) +
                          " is more than half of kernel_size " +
                          pair_text(spatial, a.kernel_h, a.kernel_w));
  }
  g.kernel_h = a.kernel_h;
  g.kernel_w = a.kernel_w;
  g.stride_h = a.stride_h;
  g.stride_w = a.stride_w;
  g.pad_h = a.pad_h;
  g.pad_w = a.pad_w;
  g.dilation_h = a.dilation_h;
  g.dilation_w = a.dilation_w;
  g.out_h = pooled_size(g.in_h, a.kernel_h, a.pad_h, a.stride_h, a.dilation_h, a.ceil_mode);
  g.out_w = pooled_size(g.in_w, a.kernel_w, a.pad_w, a.stride_w, a.dilation_w, a.ceil_mode);
  if (g.out_h < 1 || g.out_w < 1) {
    const bool dilated = a.dilation_h != 1 || a.dilation_w != 1;
    throw_unary_error(
        op, x,
        "kernel_size " + pair_text(spatial, a.kernel_h, a.kernel_w) +
            (dilated ? " with dilation " + pair_text(spatial, a.dilation_h, a.dilation_w)
                     : std::string()) +
            " is larger than the input " + pair_text(spatial, g.in_h, g.in_w) + " with padding " +
            pair_text(spatial, a.pad_h, a.pad_w) + ": the output size would be " +
            pair_text(spatial, g.out_h, g.out_w));
  }
  return {g, output_shape(x, spatial, g.out_h, g.out_w)};
}

PoolPlan plan_resize(const char* op, const Tensor& x, int spatial, int64_t out_h, int64_t out_w) {
  pool::Geometry g = input_geometry(op, x, spatial);
  if (out_h < 1 || out_w < 1) {
    throw_unary_error(op, x,
                      "output size " + pair_text(spatial, out_h, out_w) + " must be positive");
  }
  g.out_h = out_h;
  g.out_w = out_w;
  return {g, output_shape(x, spatial, out_h, out_w)};
}

std::string pool_arguments(const pool::Geometry& g, int spatial) {
  std::string text = "kernel " + pair_text(spatial, g.kernel_h, g.kernel_w) + ", stride " +
                     pair_text(spatial, g.stride_h, g.stride_w);
  if (g.pad_h != 0 || g.pad_w != 0) text += ", padding " + pair_text(spatial, g.pad_h, g.pad_w);
  if (g.dilation_h != 1 || g.dilation_w != 1) {
    text += ", dilation " + pair_text(spatial, g.dilation_h, g.dilation_w);
  }
  return text;
}

void max_pool_backward(Tape& tape, const Node& node) {
  // Y = max over each window  =>  dX[index] += dY (one input element per output)
  dispatch(node.dtype, [&]<class T>() {
    if (T* dx = tape.input_grad<T>(node, 0).to_add()) {
      const auto& s = node.state_as<MaxPoolState>();
      pool::max_backward<T>(s.geometry, node.grad_as<const T>(), s.indices, dx);
    }
  });
}

void max_pool_grad_graph(GradGraph& g) {
  // dX += scatter_add(zeros, index, dY) per plane (linear in dY; its backward gathers at index)
  const MaxPoolState s = g.state<MaxPoolState>();
  const pool::Geometry& geo = s.geometry;
  const Shape x_shape = g.input(0).shape();
  const int64_t out_plane = geo.out_h * geo.out_w;
  const Ids index(Shape{geo.planes, out_plane},
                  std::vector<int64_t>(s.indices, s.indices + geo.planes * out_plane));
  const Tensor dy = reshape(g.grad(), {geo.planes, out_plane});
  const Tensor dx =
      scatter_add(zeros(Shape{geo.planes, geo.in_h * geo.in_w}, g.grad().dtype()), 1, index, dy);
  g.add(0, reshape(dx, x_shape.dims()));
}

Ids max_pool_indices(const Tensor& y) {
  const auto& s = y.node().state_as<MaxPoolState>();
  const int64_t n = y.numel();
  return Ids(y.shape(), std::vector<int64_t>(s.indices, s.indices + n));
}

Tensor record_avg_pool(const Tensor& x, const AvgPoolState& s, Shape out_shape) {
  Tensor y = x.tape().record(*s.forward, out_shape, x.dtype(), {x}, s);
  dispatch(y.dtype(), [&]<class T>() {
    if (s.adaptive) {
      pool::adaptive_avg_forward<T>(s.geometry, x.data<T>(), output_data<T>(y));
    } else {
      pool::avg_forward<T>(s.geometry, s.options, x.data<T>(), output_data<T>(y));
    }
  });
  return y;
}

void avg_pool_forward_backward(Tape& tape, const Node& node) {
  // Y = Σ window / divisor  =>  dX[window] += dY / divisor (each element of each window)
  dispatch(node.dtype, [&]<class T>() {
    if (T* dx = tape.input_grad<T>(node, 0).to_add()) {
      const auto& s = node.state_as<AvgPoolState>();
      if (s.adaptive) {
        pool::adaptive_avg_backward<T>(s.geometry, node.grad_as<const T>(), dx);
      } else {
        pool::avg_backward<T>(s.geometry, s.options, node.grad_as<const T>(), dx);
      }
    }
  });
}

void avg_pool_forward_grad_graph(GradGraph& g) {
  // dX += avg_pool_backward(dY), the adjoint, recorded (its own adjoint is this pooling)
  const AvgPoolState s = g.state<AvgPoolState>();
  const Shape x_shape = g.input(0).shape();
  g.add(0, avg_pool_backward(g.grad(), s, x_shape));
}

}  // namespace tapegrad
