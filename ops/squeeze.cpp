// squeeze: x without its dims of size 1 (all of them, or one), torch.squeeze; a copy.
#include <array>

#include <tapegrad/ops/detail/view_op.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct SqueezeState {
  int dim;  // normalised to 0..rank-1, or -1: every dim of size 1
};

const OpDef kSqueeze{.name = "squeeze",
                     .backward = view_backward,
                     .arguments =
                         [](const Tape& t, const Node& n) {
                           const int dim = n.state_as<SqueezeState>().dim;
                           return dim < 0 ? std::string()
                                          : dim_text(dim, t.input(n, 0).shape.rank());
                         },
                     .grad_graph = view_grad_graph};
TAPEGRAD_REGISTER_OP(kSqueeze);

Tensor squeeze_dims(const Tensor& x, int only) {
  std::array<int64_t, kMaxRank> dims{};
  size_t r = 0;
  for (int i = 0; i < x.rank(); ++i) {
    const bool drop = x.shape()[i] == 1 && (only < 0 || only == i);
    if (!drop) dims[r++] = x.shape()[i];
  }
  return record_view(kSqueeze, x, Shape(std::span<const int64_t>(dims.data(), r)),
                     SqueezeState{only});
}

}  // namespace

Tensor squeeze(const Tensor& x) {
  return squeeze_dims(x, -1);
}

Tensor squeeze(const Tensor& x, int dim) {
  const int d = layout::checked_dim("squeeze", "x", x, dim);
  return squeeze_dims(x, x.rank() == 0 ? -1 : d);
}

}  // namespace tapegrad
