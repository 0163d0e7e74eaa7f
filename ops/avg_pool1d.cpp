// avg_pool1d: the mean of each window of [N, C, L] or [C, L] (torch.nn.functional.avg_pool1d).
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/pool_ops.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/pooling.h>

namespace tapegrad {

namespace {

std::string avg_pool1d_arguments(const Tape&, const Node& n) {
  const auto& s = n.state_as<AvgPoolState>();
  std::string text = pool_arguments(s.geometry, 1);
  if (!s.options.count_include_pad) text += ", count_include_pad false";
  return text;
}

const OpDef kAvgPool1d{.name = "avg_pool1d",
                       .backward = avg_pool_forward_backward,
                       .arguments = avg_pool1d_arguments,
                       .grad_graph = avg_pool_forward_grad_graph};
TAPEGRAD_REGISTER_OP(kAvgPool1d);

}  // namespace

Tensor avg_pool1d(const Tensor& x, int64_t kernel_size, std::optional<int64_t> stride,
                  int64_t padding, bool ceil_mode, bool count_include_pad) {
  const PoolPlan plan =
      plan_pool("avg_pool1d", x, 1,
                {1, kernel_size, 1, stride.value_or(kernel_size), 0, padding, 1, 1, ceil_mode});
  const AvgPoolState state{plan.geometry, {count_include_pad, 0}, false, &kAvgPool1d};
  return record_avg_pool(x, state, plan.out_shape);
}

}  // namespace tapegrad
