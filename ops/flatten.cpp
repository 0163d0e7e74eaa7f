// flatten: dims start_dim..end_dim of x merged into one (torch.flatten); a copy.
#include <array>

#include <tapegrad/ops/detail/view_op.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct FlattenState {
  int start_dim, end_dim;  // normalised to 0..rank-1 (0, 0 for a 0-dim x)
};

const OpDef kFlatten{.name = "flatten",
                     .backward = view_backward,
                     .arguments =
                         [](const Tape&, const Node& n) {
                           const auto [start, end] = n.state_as<FlattenState>();
                           return "dims " + std::to_string(start) + ".." + std::to_string(end);
                         },
                     .grad_graph = view_grad_graph};
TAPEGRAD_REGISTER_OP(kFlatten);

}  // namespace

Tensor flatten(const Tensor& x, int start_dim, int end_dim) {
  const int start = layout::checked_dim("flatten", "x", x, start_dim);
  const int end = layout::checked_dim("flatten", "x", x, end_dim);
  if (start > end) {
    throw_unary_error("flatten", x,
                      "start_dim " + std::to_string(start_dim) + " comes after end_dim " +
                          std::to_string(end_dim));
  }
  if (x.rank() == 0) {  // torch: a 0-dim tensor flattens to [1]
    return record_view(kFlatten, x, Shape{1}, FlattenState{0, 0});
  }
  std::array<int64_t, kMaxRank> dims{};
  size_t r = 0;
  for (int i = 0; i < x.rank(); ++i) {
    if (i <= start || i > end) {
      dims[r++] = x.shape()[i];
    } else {
      dims[r - 1] *= x.shape()[i];
    }
  }
  return record_view(kFlatten, x, Shape(std::span<const int64_t>(dims.data(), r)),
                     FlattenState{start, end});
}

}  // namespace tapegrad
