// The indexing ops' shared checks and saved indices (index_util.h).
#include <tapegrad/ops/detail/index_util.h>

#include <algorithm>
#include <vector>

#include <tapegrad/ops/detail/op_util.h>

namespace tapegrad {

SavedIndex save_index(Tape& tape, const Ids& index) {
  auto* values = tape.arena().allocate_array<int64_t>(index.numel());
  std::copy(index.values().begin(), index.values().end(), values);
  return {index.shape(), values};
}

Ids to_ids(const SavedIndex& index) {
  return Ids(index.shape, std::vector<int64_t>(index.values, index.values + index.shape.numel()));
}

std::string index_text(const Ids& index) {
  return "index " + index.shape().str();
}

void check_gather_shapes(const char* op, const Tensor& x, int dim, const Ids& index,
                         const Tensor* src) {
  if (src != nullptr && src->dtype() != x.dtype()) {
    throw Error(std::string(op) + ": " + describe("x", x) + " is " + dtype_name(x.dtype()) +
                " but " + describe("src", *src) + " is " + dtype_name(src->dtype()));
  }
  const std::string what = std::string(op) + ": " + describe("x", x) + ", " + index_text(index) +
                           (src != nullptr ? ", " + describe("src", *src) : "") + ": ";
  if (index.rank() != x.rank() || (src != nullptr && src->rank() != x.rank())) {
    throw Error(what + "index" + (src != nullptr ? " and src" : "") + " must have x's rank");
  }
  for (int d = 0; d < x.rank(); ++d) {
    if (d != dim && index.shape()[d] > x.shape()[d]) {
      throw Error(what + "index is larger than x in dim " + std::to_string(d));
    }
    if (src != nullptr && index.shape()[d] > src->shape()[d]) {
      throw Error(what + "index is larger than src in dim " + std::to_string(d));
    }
  }
}

void check_index_values(const char* op, const Tensor& x, const Ids& index, int dim, int64_t size) {
  const std::span<const int64_t> values = index.values();
  // One branch-free pass first (a negative index compares huge unsigned); the search for the
  // position to name only when something is out of range.
  bool bad = false;
  for (const int64_t v : values) bad |= static_cast<uint64_t>(v) >= static_cast<uint64_t>(size);
  if (!bad) return;
  for (size_t p = 0; p < values.size(); ++p) {
    if (values[p] >= 0 && values[p] < size) continue;
    std::string where = "index";
    if (index.rank() > 0) {
      std::array<int64_t, kMaxRank> at{};
      auto rest = static_cast<int64_t>(p);
      for (int d = index.rank() - 1; d >= 0; --d) {
        at[static_cast<size_t>(d)] = rest % index.shape()[d];
        rest /= index.shape()[d];
      }
      where += "[";
      for (int d = 0; d < index.rank(); ++d) {
        where += (d > 0 ? ", " : "") + std::to_string(at[static_cast<size_t>(d)]);
      }
      where += "]";
    }
    throw_unary_error(op, x,
                      "index " + std::to_string(values[p]) + " at " + where +
                          " is out of range for dim " + std::to_string(dim) + " of size " +
                          std::to_string(size));
  }
}

}  // namespace tapegrad
