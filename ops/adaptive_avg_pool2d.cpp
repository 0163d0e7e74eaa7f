// adaptive_avg_pool2d: the mean of each of output_size's windows of [N, C, H, W] or [C, H, W]
// (torch.nn.functional.adaptive_avg_pool2d).
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/pool_ops.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/pooling.h>

namespace tapegrad {

namespace {

const OpDef kAdaptiveAvgPool2d{.name = "adaptive_avg_pool2d",
                               .backward = avg_pool_forward_backward,
                               .arguments =
                                   [](const Tape&, const Node& n) {
                                     const pool::Geometry& g = n.state_as<AvgPoolState>().geometry;
                                     return "output_size [" + std::to_string(g.out_h) + ", " +
                                            std::to_string(g.out_w) + "]";
                                   },
                               .grad_graph = avg_pool_forward_grad_graph};
TAPEGRAD_REGISTER_OP(kAdaptiveAvgPool2d);

}  // namespace

Tensor adaptive_avg_pool2d(const Tensor& x, Size2 output_size) {
  const PoolPlan plan = plan_resize("adaptive_avg_pool2d", x, 2, output_size.h, output_size.w);
  const AvgPoolState state{plan.geometry, {}, true, &kAdaptiveAvgPool2d};
  return record_avg_pool(x, state, plan.out_shape);
}

}  // namespace tapegrad
