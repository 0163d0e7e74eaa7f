// unsqueeze: x with a new dim of size 1 inserted at `dim` (torch.unsqueeze); a copy.
#include <array>

#include <tapegrad/ops/detail/view_op.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct UnsqueezeState {
  int dim;  // the new dim, 0..rank(y)-1
};

const OpDef kUnsqueeze{.name = "unsqueeze",
                       .backward = view_backward,
                       .arguments =
                           [](const Tape&, const Node& n) {
                             return dim_text(n.state_as<UnsqueezeState>().dim, n.shape.rank());
                           },
                       .grad_graph = view_grad_graph};
TAPEGRAD_REGISTER_OP(kUnsqueeze);

}  // namespace

Tensor unsqueeze(const Tensor& x, int dim) {
  const int rank = x.rank() + 1;
  if (dim < -rank || dim >= rank) {
    throw_unary_error("unsqueeze", x,
                      "dim " + std::to_string(dim) + " is out of range (expected " +
                          std::to_string(-rank) + ".." + std::to_string(rank - 1) + ")");
  }
  check_result_rank("unsqueeze", x, rank);
  const int d = dim < 0 ? dim + rank : dim;
  std::array<int64_t, kMaxRank> dims{};
  for (int i = 0, j = 0; i < rank; ++i) {
    dims[static_cast<size_t>(i)] = i == d ? 1 : x.shape()[j++];
  }
  return record_view(kUnsqueeze, x,
                     Shape(std::span<const int64_t>(dims.data(), static_cast<size_t>(rank))),
                     UnsqueezeState{d});
}

}  // namespace tapegrad
