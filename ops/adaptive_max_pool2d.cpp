// adaptive_max_pool2d: the maximum of each of output_size's windows of [N, C, H, W] or [C, H, W]
// (torch.nn.functional.adaptive_max_pool2d).
#include <utility>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/pool_ops.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/pooling.h>

namespace tapegrad {

namespace {

const OpDef kAdaptiveMaxPool2d{
    .name = "adaptive_max_pool2d",
    .backward = max_pool_backward,
    .arguments =
        [](const Tape&, const Node& n) {
          const pool::Geometry& g = n.state_as<MaxPoolState>().geometry;
          return "output_size [" + std::to_string(g.out_h) + ", " + std::to_string(g.out_w) + "]";
        },
    .state_bytes = [](const Tape&,
                      const Node& n) { return n.shape.numel() * int64_t{sizeof(int64_t)}; },
    .grad_graph = max_pool_grad_graph};
TAPEGRAD_REGISTER_OP(kAdaptiveMaxPool2d);

}  // namespace

Tensor adaptive_max_pool2d(const Tensor& x, Size2 output_size) {
  const PoolPlan plan = plan_resize("adaptive_max_pool2d", x, 2, output_size.h, output_size.w);
  auto* indices = x.tape().arena().allocate_array<int64_t>(plan.out_shape.numel());
  Tensor y = x.tape().record(kAdaptiveMaxPool2d, plan.out_shape, x.dtype(), {x},
                             MaxPoolState{plan.geometry, indices});
  dispatch(y.dtype(), [&]<class T>() {
    pool::adaptive_max_forward<T>(plan.geometry, x.data<T>(), output_data<T>(y), indices);
  });
  return y;
}

PoolWithIndices adaptive_max_pool2d_with_indices(const Tensor& x, Size2 output_size) {
  Tensor y = adaptive_max_pool2d(x, output_size);
  Ids indices = max_pool_indices(y);
  return {std::move(y), std::move(indices)};
}

}  // namespace tapegrad
