// max_pool1d: the maximum of each window of [N, C, L] or [C, L] (torch.nn.functional.max_pool1d).
#include <utility>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/pool_ops.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/pooling.h>

namespace tapegrad {

namespace {

const OpDef kMaxPool1d{
    .name = "max_pool1d",
    .backward = max_pool_backward,
    .arguments =
        [](const Tape&, const Node& n) {
          return pool_arguments(n.state_as<MaxPoolState>().geometry, 1);
        },
    .state_bytes = [](const Tape&,
                      const Node& n) { return n.shape.numel() * int64_t{sizeof(int64_t)}; },
    .grad_graph = max_pool_grad_graph};
TAPEGRAD_REGISTER_OP(kMaxPool1d);

}  // namespace

Tensor max_pool1d(const Tensor& x, int64_t kernel_size, std::optional<int64_t> stride,
                  int64_t padding, int64_t dilation, bool ceil_mode) {
  const PoolPlan plan = plan_pool(
      "max_pool1d", x, 1,
      {1, kernel_size, 1, stride.value_or(kernel_size), 0, padding, 1, dilation, ceil_mode});
  auto* indices = x.tape().arena().allocate_array<int64_t>(plan.out_shape.numel());
  Tensor y = x.tape().record(kMaxPool1d, plan.out_shape, x.dtype(), {x},
                             MaxPoolState{plan.geometry, indices});
  dispatch(y.dtype(), [&]<class T>() {
    pool::max_forward<T>(plan.geometry, x.data<T>(), output_data<T>(y), indices);
  });
  return y;
}

PoolWithIndices max_pool1d_with_indices(const Tensor& x, int64_t kernel_size,
                                        std::optional<int64_t> stride, int64_t padding,
                                        int64_t dilation, bool ceil_mode) {
  Tensor y = max_pool1d(x, kernel_size, stride, padding, dilation, ceil_mode);
  Ids indices = max_pool_indices(y);
  return {std::move(y), std::move(indices)};
}

}  // namespace tapegrad
