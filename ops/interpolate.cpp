// interpolate: [N, C, H, W] resampled to a new size, nearest or bilinear
// (torch.nn.functional.interpolate for 4-D inputs).
#include <algorithm>
#include <cmath>
#include <string>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/pool_ops.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/pooling.h>

namespace tapegrad {

namespace {

void interpolate_kernel_backward(Tape& tape, const Node& node) {
  // Y = Σ weights · X at each output's neighbours  =>  dX[neighbour] += weight · dY
  dispatch(node.dtype, [&]<class T>() {
    if (T* dx = tape.input_grad<T>(node, 0).to_add()) {
      const auto& s = node.state_as<InterpolateState>();
      pool::interpolate_backward<T>(s.geometry, s.h, s.w, s.nearest, node.grad_as<const T>(), dx);
    }
  });
}

void interpolate_grad_graph(GradGraph& g) {
  // dX += interpolate_backward(dY), the adjoint, recorded (its own adjoint is this interpolation)
  const InterpolateState s = g.state<InterpolateState>();
  const Shape x_shape = g.input(0).shape();
  g.add(0, interpolate_backward(g.grad(), s, x_shape));
}

std::string interpolate_arguments(const Tape&, const Node& n) {
  const auto& s = n.state_as<InterpolateState>();
  if (s.nearest) return "nearest";
  return s.align_corners ? "bilinear, align_corners" : "bilinear";
}

const OpDef kInterpolate{.name = "interpolate",
                         .backward = interpolate_kernel_backward,
                         .arguments = interpolate_arguments,
                         .grad_graph = interpolate_grad_graph};
TAPEGRAD_REGISTER_OP(kInterpolate);

// torch's nearest_idx: floor(i·scale) in float, clamped to the last input, with its two exact
// shortcuts (equal sizes, twice the size).
int64_t interpolate_nearest_source(int64_t i, int64_t in, int64_t out,
                                   std::optional<double> scale) {
  if (out == in) return i;
  if (out == 2 * in) return i >> 1;
  const float s = scale.has_value() && *scale > 0.0
                      ? static_cast<float>(1.0 / *scale)
                      : static_cast<float>(in) / static_cast<float>(out);
  return std::min(static_cast<int64_t>(std::floor(static_cast<float>(i) * s)), in - 1);
}

// torch's compute_source_index_and_lambda as torch 1.13's CPU kernel rounds it: the ratio in T,
// the source coordinate in double (not rounded to T), each weight rounded to T.
template <class T>
void interpolate_linear_axis(int64_t in, int64_t out, std::optional<double> scale,
                             bool align_corners, int64_t* i0, int64_t* i1, double* l0, double* l1) {
  T ratio;
  if (align_corners) {
    ratio = out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
  } else {
    ratio = scale.has_value() && *scale > 0.0 ? static_cast<T>(1.0 / *scale)
                                              : static_cast<T>(in) / static_cast<T>(out);
  }
  for (int64_t i = 0; i < out; ++i) {
    if (out == in) {
      i0[i] = i1[i] = i;
      l0[i] = 1.0;
      l1[i] = 0.0;
      continue;
    }
    const auto d = static_cast<double>(i);
    // ratio·(d + 0.5) − 0.5 fused, as torch's build (and GCC wherever FMA is on) computes it, so
    // a build without FMA gets the same weights.
    double src = align_corners ? static_cast<double>(ratio) * d
                               : std::fma(static_cast<double>(ratio), d + 0.5, -0.5);
    if (src < 0.0) src = 0.0;
    const auto k = static_cast<int64_t>(src);
    i0[i] = k;
    i1[i] = k + (k < in - 1 ? 1 : 0);
    const auto lambda1 = static_cast<T>(std::min(std::max(src - static_cast<double>(k), 0.0), 1.0));
    l1[i] = lambda1;
    l0[i] = T(1) - lambda1;
  }
}

pool::Axis interpolate_axis(Arena& arena, int64_t in, int64_t out, std::optional<double> scale,
                            bool nearest, bool align_corners, DType dtype) {
  auto* i0 = arena.allocate_array<int64_t>(out);
  auto* i1 = arena.allocate_array<int64_t>(out);
  auto* l0 = arena.allocate_array<double>(out);
  auto* l1 = arena.allocate_array<double>(out);
  if (nearest) {
    for (int64_t i = 0; i < out; ++i) {
      i0[i] = i1[i] = interpolate_nearest_source(i, in, out, scale);
      l0[i] = 1.0;
      l1[i] = 0.0;
    }
  } else if (dtype == DType::Float32) {
    interpolate_linear_axis<float>(in, out, scale, align_corners, i0, i1, l0, l1);
  } else {
    interpolate_linear_axis<double>(in, out, scale, align_corners, i0, i1, l0, l1);
  }
  return {i0, i1, l0, l1};
}

}  // namespace

Tensor record_interpolate(const Tensor& x, const InterpolateState& s, Shape out_shape) {
  Tensor y = x.tape().record(kInterpolate, out_shape, x.dtype(), {x}, s);
  dispatch(y.dtype(), [&]<class T>() {
    pool::interpolate_forward<T>(s.geometry, s.h, s.w, s.nearest, x.data<T>(), output_data<T>(y));
  });
  return y;
}

Tensor interpolate(const Tensor& x, const InterpolateOptions& options) {
  const char* op = "interpolate";
  if (x.rank() != 4) {
    throw_unary_error(op, x,
                      "expected a 4-D input [N, C, H, W], got rank " + std::to_string(x.rank()));
  }
  const bool nearest = options.mode == InterpolateMode::Nearest;
  if (nearest && options.align_corners.has_value()) {
    throw_unary_error(op, x, "align_corners can only be set with mode bilinear");
  }
  if (options.size.has_value() == options.scale_factor.has_value()) {
    throw_unary_error(op, x, "give exactly one of size and scale_factor");
  }
  const Shape shape = x.shape();
  int64_t out_h = 0, out_w = 0;
  std::optional<double> scale_h, scale_w;
  if (options.size.has_value()) {
    out_h = options.size->h;
    out_w = options.size->w;
  } else {
    const Scale2 f = *options.scale_factor;
    if (!std::isfinite(f.h) || !std::isfinite(f.w) || f.h <= 0.0 || f.w <= 0.0) {
      throw_unary_error(op, x,
                        "scale_factor [" + number_text(f.h) + ", " + number_text(f.w) +
                            "] must be positive and finite");
    }
    out_h = static_cast<int64_t>(std::floor(static_cast<double>(shape[2]) * f.h));
    out_w = static_cast<int64_t>(std::floor(static_cast<double>(shape[3]) * f.w));
    if (!options.recompute_scale_factor) {
      scale_h = f.h;
      scale_w = f.w;
    }
  }
  const PoolPlan plan = plan_resize(op, x, 2, out_h, out_w);
  const bool align = options.align_corners.value_or(false);
  Arena& arena = x.tape().arena();
  InterpolateState s{
      plan.geometry, interpolate_axis(arena, shape[2], out_h, scale_h, nearest, align, x.dtype()),
      interpolate_axis(arena, shape[3], out_w, scale_w, nearest, align, x.dtype()), nearest, align};
  return record_interpolate(x, s, plan.out_shape);
}

}  // namespace tapegrad
