// avg_pool_backward: the average poolings' adjoint as an op (dY spread over each window), what
// their recorded backwards record, so that a gradient through avg pooling can be differentiated.
#include <algorithm>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/pool_ops.h>
#include <tapegrad/ops/grad.h>

namespace tapegrad {

namespace {

void avg_pool_backward_backward(Tape& tape, const Node& node) {
  // Z = pool adjoint of G (Z[window] += G / divisor)  =>  dG += pool(dZ), the forward pooling
  dispatch(node.dtype, [&]<class T>() {
    if (T* dg = tape.input_grad<T>(node, 0).to_add()) {
      const auto& s = node.state_as<AvgPoolState>();
      if (s.adaptive) {
        pool::adaptive_avg_forward<T>(s.geometry, node.grad_as<const T>(), dg, true);
      } else {
        pool::avg_forward<T>(s.geometry, s.options, node.grad_as<const T>(), dg, true);
      }
    }
  });
}

void avg_pool_backward_grad_graph(GradGraph& g) {
  // dG += pool(dZ), recorded as the forward op
  const AvgPoolState s = g.state<AvgPoolState>();
  const Shape g_shape = g.input(0).shape();
  g.add(0, record_avg_pool(g.grad(), s, g_shape));
}

const OpDef kAvgPoolBackward{.name = "avg_pool_backward",
                             .backward = avg_pool_backward_backward,
                             .arguments =
                                 [](const Tape&, const Node& n) {
                                   return std::string("of ") +
                                          n.state_as<AvgPoolState>().forward->name;
                                 },
                             .grad_graph = avg_pool_backward_grad_graph};
TAPEGRAD_REGISTER_OP(kAvgPoolBackward);

}  // namespace

Tensor avg_pool_backward(const Tensor& dy, const AvgPoolState& s, Shape x_shape) {
  Tensor dx = dy.tape().record(kAvgPoolBackward, x_shape, dy.dtype(), {dy}, s);
  dispatch(dx.dtype(), [&]<class T>() {
    T* out = output_data<T>(dx);
    std::fill_n(out, dx.numel(), T(0));
    if (s.adaptive) {
      pool::adaptive_avg_backward<T>(s.geometry, dy.data<T>(), out);
    } else {
      pool::avg_backward<T>(s.geometry, s.options, dy.data<T>(), out);
    }
  });
  return dx;
}

}  // namespace tapegrad
