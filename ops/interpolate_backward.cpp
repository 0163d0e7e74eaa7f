// interpolate_backward: interpolate's adjoint as an op (dY spread back onto each output's
// neighbours), what its recorded backward records, so that its gradient can be differentiated.
#include <algorithm>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/pool_ops.h>
#include <tapegrad/ops/grad.h>

namespace tapegrad {

namespace {

void interpolate_backward_backward(Tape& tape, const Node& node) {
  // Z = adjoint of G (Z[neighbour] += weight · G)  =>  dG += interpolate(dZ)
  dispatch(node.dtype, [&]<class T>() {
    if (T* dg = tape.input_grad<T>(node, 0).to_add()) {
      const auto& s = node.state_as<InterpolateState>();
      pool::interpolate_forward<T>(s.geometry, s.h, s.w, s.nearest, node.grad_as<const T>(), dg,
                                   true);
    }
  });
}

void interpolate_backward_grad_graph(GradGraph& g) {
  // dG += interpolate(dZ), recorded as the forward op
  const InterpolateState s = g.state<InterpolateState>();
  const Shape g_shape = g.input(0).shape();
  g.add(0, record_interpolate(g.grad(), s, g_shape));
}

const OpDef kInterpolateBackward{
    .name = "interpolate_backward",
    .backward = interpolate_backward_backward,
    .arguments =
        [](const Tape&, const Node& n) {
          return std::string(n.state_as<InterpolateState>().nearest ? "nearest" : "bilinear");
        },
    .grad_graph = interpolate_backward_grad_graph};
TAPEGRAD_REGISTER_OP(kInterpolateBackward);

}  // namespace

Tensor interpolate_backward(const Tensor& dy, const InterpolateState& s, Shape x_shape) {
  Tensor dx = dy.tape().record(kInterpolateBackward, x_shape, dy.dtype(), {dy}, s);
  dispatch(dx.dtype(), [&]<class T>() {
    T* out = output_data<T>(dx);
    std::fill_n(out, dx.numel(), T(0));
    pool::interpolate_backward<T>(s.geometry, s.h, s.w, s.nearest, dy.data<T>(), out);
  });
  return dx;
}

}  // namespace tapegrad
