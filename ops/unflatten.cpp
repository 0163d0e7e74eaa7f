// unflatten: one dim of x split into several of the given sizes (torch.unflatten); a copy.
#include <array>

#include <tapegrad/ops/detail/view_op.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct UnflattenState {
  int dim;    // normalised to 0..rank(x)-1
  int count;  // how many dims it became
};

const OpDef kUnflatten{.name = "unflatten",
                       .backward = view_backward,
                       .arguments =
                           [](const Tape&, const Node& n) {
                             const auto [dim, count] = n.state_as<UnflattenState>();
                             return "dim " + std::to_string(dim) + " into " +
                                    int_list_text(n.shape.dims().subspan(
                                        static_cast<size_t>(dim), static_cast<size_t>(count)));
                           },
                       .grad_graph = view_grad_graph};
TAPEGRAD_REGISTER_OP(kUnflatten);

}  // namespace

Tensor unflatten(const Tensor& x, int dim, std::span<const int64_t> sizes) {
  if (x.rank() == 0) throw_unary_error("unflatten", x, "cannot unflatten a 0-dim tensor");
  const int d = layout::checked_dim("unflatten", "x", x, dim);
  const std::string what = "sizes " + int_list_text(sizes);
  if (sizes.empty()) throw_unary_error("unflatten", x, what + " is empty");
  const int rank = x.rank() - 1 + static_cast<int>(sizes.size());
  check_result_rank("unflatten", x, rank);
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1 && inferred < 0) {
      inferred = static_cast<int>(i);
    } else if (sizes[i] < 0) {
      throw_unary_error("unflatten", x,
                        what + (sizes[i] == -1 ? " has more than one -1"
                                               : " has invalid size " + std::to_string(sizes[i])));
    } else if (sizes[i] > 0 && known > (int64_t{1} << 60) / sizes[i]) {
      throw_unary_error("unflatten", x, what + " multiply to more than 2^60");
    } else {
      known *= sizes[i];
    }
  }
  const int64_t size = x.shape()[d];
  std::array<int64_t, kMaxRank> split{};
  std::copy(sizes.begin(), sizes.end(), split.begin());
  if (inferred >= 0) {
    if (known == 0 || size % known != 0) {
      throw_unary_error("unflatten", x,
                        what + " cannot fill dim " + std::to_string(dim) + " of size " +
                            std::to_string(size) + (known == 0 ? " (the -1 is ambiguous)" : ""));
    }
    split[static_cast<size_t>(inferred)] = size / known;
  } else if (known != size) {
    throw_unary_error("unflatten", x,
                      what + " multiply to " + std::to_string(known) + ", not to size " +
                          std::to_string(size) + " of dim " + std::to_string(dim));
  }
  std::array<int64_t, kMaxRank> dims{};
  size_t r = 0;
  for (int i = 0; i < x.rank(); ++i) {
    if (i == d) {
      for (size_t k = 0; k < sizes.size(); ++k) dims[r++] = split[k];
    } else {
      dims[r++] = x.shape()[i];
    }
  }
  return record_view(kUnflatten, x, Shape(std::span<const int64_t>(dims.data(), r)),
                     UnflattenState{d, static_cast<int>(sizes.size())});
}

Tensor unflatten(const Tensor& x, int dim, std::initializer_list<int64_t> sizes) {
  return unflatten(x, dim, std::span<const int64_t>(sizes.begin(), sizes.size()));
}

}  // namespace tapegrad
