// permute: x's dims in any order (torch.permute), copied into a new contiguous tensor.
#include <tapegrad/ops/detail/permute_op.h>
#include <tapegrad/ops/detail/view_op.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

const OpDef kPermute{.name = "permute",
                     .backward = permute_backward,
                     .arguments = permute_arguments,
                     .grad_graph = permute_grad_graph};
TAPEGRAD_REGISTER_OP(kPermute);

}  // namespace

Tensor permute(const Tensor& x, std::span<const int64_t> dims) {
  const int rank = x.rank();
  if (static_cast<int>(dims.size()) != rank) {
    throw_unary_error("permute", x,
                      "dims " + int_list_text(dims) + " has " + std::to_string(dims.size()) +
                          " entries for a tensor of rank " + std::to_string(rank));
  }
  PermuteState s{rank, {}};
  std::array<bool, kMaxRank> seen{};
  for (int d = 0; d < rank; ++d) {
    const int64_t dim = dims[static_cast<size_t>(d)];
    if (dim < -rank || dim >= rank) {
      throw_unary_error("permute", x,
                        "dims " + int_list_text(dims) + ": dim " + std::to_string(dim) +
                            " is out of range (expected " + std::to_string(-rank) + ".." +
                            std::to_string(rank - 1) + ")");
    }
    const int64_t n = dim < 0 ? dim + rank : dim;
    if (seen[static_cast<size_t>(n)]) {
      throw_unary_error("permute", x,
                        "dims " + int_list_text(dims) + " repeats dim " + std::to_string(n));
    }
    seen[static_cast<size_t>(n)] = true;
    s.perm[static_cast<size_t>(d)] = n;
  }
  return record_permute(kPermute, x, s);
}

Tensor permute(const Tensor& x, std::initializer_list<int64_t> dims) {
  return permute(x, std::span<const int64_t>(dims.begin(), dims.size()));
}

}  // namespace tapegrad
