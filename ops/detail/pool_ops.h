// What the pooling and interpolation ops share (ops/pooling.h): the argument checks and output
// shapes, the saved state, and the linear ops' adjoints recorded as ops (avg_pool_backward,
// interpolate_backward), which their forwards' recorded backwards call and the other way round.
#pragma once

#include <cstdint>
#include <string>

#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/op.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/kernels/pool/pool.h>

namespace tapegrad {

// A pooling window's arguments, per spatial dim ([H, W]; a 1-D op has h = kernel 1, stride 1).
struct PoolArgs {
  int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  bool ceil_mode;
};

// x's planes and sizes and the output's shape: x [N, C, H, W] or [C, H, W] (spatial = 2), or
// [N, C, L] or [C, L] (spatial = 1, read as H = 1).
struct PoolPlan {
  pool::Geometry geometry;
  Shape out_shape;
};
// Checks x's rank and sizes and the window's arguments as torch does (pool2d_shape_check) and
// throws Error naming `op`, the argument and the shapes.
PoolPlan plan_pool(const char* op, const Tensor& x, int spatial, const PoolArgs& args);
// The same for an output of given spatial sizes (adaptive pooling, interpolation): x's rank and
// sizes checked, out_h and out_w >= 1.
PoolPlan plan_resize(const char* op, const Tensor& x, int spatial, int64_t out_h, int64_t out_w);
// A window's arguments as drawings show them: "kernel [2, 2], stride [2, 2]" (padding and
// dilation when not 0 and 1); spatial = 1 shows numbers.
std::string pool_arguments(const pool::Geometry& g, int spatial);

// The kernel backward of the max pooling ops: dX[index] += dY. Their state starts with this.
struct MaxPoolState {
  pool::Geometry geometry;
  const int64_t* indices;  // per output element, in the tape's arena
};
void max_pool_backward(Tape& tape, const Node& node);
// Their recorded backward: dY scattered at the saved indices (scatter_add into zeros, per plane),
// whose own backward gathers at the same indices.
void max_pool_grad_graph(GradGraph& g);
// The saved indices as Ids of the output's shape.
Ids max_pool_indices(const Tensor& y);

// The average pooling ops (avg_pool1d, avg_pool2d, adaptive_avg_pool2d): one state, one adjoint.
struct AvgPoolState {
  pool::Geometry geometry;
  pool::AvgOptions options;
  bool adaptive;
  const OpDef* forward;  // the op to record for the adjoint's own adjoint
};
// Records the forward `*s.forward` of x (the pooling of s) with output `out_shape`.
Tensor record_avg_pool(const Tensor& x, const AvgPoolState& s, Shape out_shape);
void avg_pool_forward_backward(Tape& tape, const Node& node);  // dX += pool adjoint of dY
void avg_pool_forward_grad_graph(GradGraph& g);                // dX += avg_pool_backward(dY)
// The adjoint of the pooling of s: dy (the pooled shape) spread over `x_shape`.
Tensor avg_pool_backward(const Tensor& dy, const AvgPoolState& s, Shape x_shape);

// interpolate's state: its geometry and the two axes' tables (arena), shared with the adjoint.
struct InterpolateState {
  pool::Geometry geometry;
  pool::Axis h, w;
  bool nearest;
  bool align_corners;  // for the drawing's arguments
};
Tensor record_interpolate(const Tensor& x, const InterpolateState& s, Shape out_shape);
Tensor interpolate_backward(const Tensor& dy, const InterpolateState& s, Shape x_shape);

}  // namespace tapegrad
