// movedim: dims of x moved to new positions, the others keeping their order (torch.movedim).
#include <string>
#include <tuple>

#include <tapegrad/ops/detail/permute_op.h>
#include <tapegrad/ops/detail/view_op.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

const OpDef kMovedim{.name = "movedim",
                     .backward = permute_backward,
                     .arguments = permute_arguments,
                     .grad_graph = permute_grad_graph};
TAPEGRAD_REGISTER_OP(kMovedim);

}  // namespace

Tensor movedim(const Tensor& x, std::span<const int64_t> source,
               std::span<const int64_t> destination) {
  const int rank = x.rank();
  const std::string what =
      "source " + int_list_text(source) + ", destination " + int_list_text(destination);
  if (source.size() != destination.size()) {
    throw_unary_error("movedim", x, what + ": different lengths");
  }
  // rank 0 takes dims -1 and 0, as torch.
  const int lo = rank == 0 ? -1 : -rank, hi = rank == 0 ? 0 : rank - 1;
  std::array<int64_t, kMaxRank> from{}, to{};
  std::array<bool, kMaxRank> used_from{}, used_to{};
  for (size_t i = 0; i < source.size(); ++i) {
    for (const auto& [dim, list, used, name] :
         {std::tuple{source[i], &from, &used_from, "source"},
          std::tuple{destination[i], &to, &used_to, "destination"}}) {
      if (dim < lo || dim > hi) {
        throw_unary_error("movedim", x,
                          what + ": dim " + std::to_string(dim) + " is out of range (expected " +
                              std::to_string(lo) + ".." + std::to_string(hi) + ")");
      }
      const int64_t n = dim < 0 ? dim + (rank == 0 ? 1 : rank) : dim;
      if ((*used)[static_cast<size_t>(n)]) {
        throw_unary_error("movedim", x, what + ": " + name + " repeats dim " + std::to_string(n));
      }
      (*used)[static_cast<size_t>(n)] = true;
      (*list)[i] = n;
    }
  }
  // torch's rule: the moved dims land at their destinations; the rest fill the free positions
  // in their original order.
  PermuteState s{rank, {}};
  std::array<bool, kMaxRank> placed{};
  for (size_t i = 0; i < source.size(); ++i) {
    s.perm[static_cast<size_t>(to[i])] = from[i];
    placed[static_cast<size_t>(to[i])] = true;
  }
  int next = 0;
  for (int d = 0; d < rank; ++d) {
    if (used_from[static_cast<size_t>(d)]) continue;
    while (placed[static_cast<size_t>(next)]) ++next;
    s.perm[static_cast<size_t>(next++)] = d;
  }
  return record_permute(kMovedim, x, s);
}

Tensor movedim(const Tensor& x, int source, int destination) {
  const int64_t from = source, to = destination;
  return movedim(x, std::span<const int64_t>(&from, 1), std::span<const int64_t>(&to, 1));
}

}  // namespace tapegrad
