// max_pool2d: the maximum of each window of [N, C, H, W] or [C, H, W]
// (torch.nn.functional.max_pool2d, and max_pool2d_with_indices for return_indices=True).
#include <utility>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/pool_ops.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/pooling.h>

namespace tapegrad {

namespace {

const OpDef kMaxPool2d{
    .name = "max_pool2d",
    .backward = max_pool_backward,
    .arguments =
        [](const Tape&, const Node& n) {
          return pool_arguments(n.state_as<MaxPoolState>().geometry, 2);
        },
    .state_bytes = [](const Tape&,
                      const Node& n) { return n.shape.numel() * int64_t{sizeof(int64_t)}; },
    .grad_graph = max_pool_grad_graph};
TAPEGRAD_REGISTER_OP(kMaxPool2d);

Tensor max_pool2d_record(const Tensor& x, Size2 kernel_size, std::optional<Size2> stride,
                         Size2 padding, Size2 dilation, bool ceil_mode) {
  const Size2 step = stride.value_or(kernel_size);
  const PoolPlan plan = plan_pool("max_pool2d", x, 2,
                                  {kernel_size.h, kernel_size.w, step.h, step.w, padding.h,
                                   padding.w, dilation.h, dilation.w, ceil_mode});
  auto* indices = x.tape().arena().allocate_array<int64_t>(plan.out_shape.numel());
  Tensor y = x.tape().record(kMaxPool2d, plan.out_shape, x.dtype(), {x},
                             MaxPoolState{plan.geometry, indices});
  dispatch(y.dtype(), [&]<class T>() {
    pool::max_forward<T>(plan.geometry, x.data<T>(), output_data<T>(y), indices);
  });
  return y;
}

}  // namespace

Tensor max_pool2d(const Tensor& x, Size2 kernel_size, std::optional<Size2> stride, Size2 padding,
                  Size2 dilation, bool ceil_mode) {
  return max_pool2d_record(x, kernel_size, stride, padding, dilation, ceil_mode);
}

PoolWithIndices max_pool2d_with_indices(const Tensor& x, Size2 kernel_size,
                                        std::optional<Size2> stride, Size2 padding, Size2 dilation,
                                        bool ceil_mode) {
  Tensor y = max_pool2d_record(x, kernel_size, stride, padding, dilation, ceil_mode);
  Ids indices = max_pool_indices(y);
  return {std::move(y), std::move(indices)};
}

}  // namespace tapegrad
