// avg_pool2d: the mean of each window of [N, C, H, W] or [C, H, W]
// (torch.nn.functional.avg_pool2d).
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/pool_ops.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/pooling.h>

namespace tapegrad {

namespace {

std::string avg_pool2d_arguments(const Tape&, const Node& n) {
  const auto& s = n.state_as<AvgPoolState>();
  std::string text = pool_arguments(s.geometry, 2);
  if (!s.options.count_include_pad) text += ", count_include_pad false";
  if (s.options.divisor_override != 0) {
    text += ", divisor_override " + std::to_string(s.options.divisor_override);
  }
  return text;
}

const OpDef kAvgPool2d{.name = "avg_pool2d",
                       .backward = avg_pool_forward_backward,
                       .arguments = avg_pool2d_arguments,
                       .grad_graph = avg_pool_forward_grad_graph};
TAPEGRAD_REGISTER_OP(kAvgPool2d);

}  // namespace

Tensor avg_pool2d(const Tensor& x, Size2 kernel_size, std::optional<Size2> stride, Size2 padding,
                  bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  const Size2 step = stride.value_or(kernel_size);
  const PoolPlan plan = plan_pool(
      "avg_pool2d", x, 2,
      {kernel_size.h, kernel_size.w, step.h, step.w, padding.h, padding.w, 1, 1, ceil_mode});
  if (divisor_override.has_value() && *divisor_override == 0) {
    throw_unary_error("avg_pool2d", x, "divisor_override must not be 0");
  }
  const AvgPoolState state{
      plan.geometry, {count_include_pad, divisor_override.value_or(0)}, false, &kAvgPool2d};
  return record_avg_pool(x, state, plan.out_shape);
}

}  // namespace tapegrad
