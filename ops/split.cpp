// split, chunk and unbind: x cut along one dim into pieces (torch.split, chunk, unbind). Like
// torch's, they are made of other ops: each piece is a narrow (unbind's a select), recorded as
// such, so their gradients are narrow's and select's.
#include <string>

#include <tapegrad/ops/detail/layout_copy.h>
#include <tapegrad/ops/detail/view_op.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

int split_dim(const char* op, const Tensor& x, int dim) {
  if (x.rank() == 0) throw_unary_error(op, x, "expects a tensor of at least one dim");
  return layout::checked_dim(op, "x", x, dim);
}

std::vector<Tensor> narrow_pieces(const Tensor& x, int d, std::span<const int64_t> sizes) {
  std::vector<Tensor> pieces;
  pieces.reserve(sizes.size());
  int64_t start = 0;
  for (int64_t size : sizes) {
    pieces.push_back(narrow(x, d, start, size));
    start += size;
  }
  return pieces;
}

}  // namespace

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int dim) {
  const int d = split_dim("split", x, dim);
  const int64_t size = x.shape()[d];
  if (split_size < 0 || (split_size == 0 && size != 0)) {
    throw_unary_error("split", x,
                      "split_size " + std::to_string(split_size) + " cannot split dim " +
                          std::to_string(dim) + " of size " + std::to_string(size));
  }
  std::vector<int64_t> sizes;
  for (int64_t start = 0; start < size; start += split_size) {
    sizes.push_back(std::min(split_size, size - start));
  }
  if (sizes.empty()) sizes.push_back(0);  // torch: one empty piece
  return narrow_pieces(x, d, sizes);
}

std::vector<Tensor> split(const Tensor& x, std::span<const int64_t> split_sizes, int dim) {
  const int d = split_dim("split", x, dim);
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    if (s < 0) {
      throw_unary_error("split", x,
                        "split_sizes " + int_list_text(split_sizes) + " has a negative size");
    }
    total += s;
  }
  if (total != x.shape()[d]) {
    throw_unary_error("split", x,
                      "split_sizes " + int_list_text(split_sizes) + " add up to " +
                          std::to_string(total) + ", not to size " + std::to_string(x.shape()[d]) +
                          " of dim " + std::to_string(dim));
  }
  return narrow_pieces(x, d, split_sizes);
}

std::vector<Tensor> split(const Tensor& x, std::initializer_list<int64_t> split_sizes, int dim) {
  return split(x, std::span<const int64_t>(split_sizes.begin(), split_sizes.size()), dim);
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int dim) {
  const int d = split_dim("chunk", x, dim);
  if (chunks <= 0) {
    throw_unary_error("chunk", x, "chunks " + std::to_string(chunks) + " must be positive");
  }
  const int64_t size = x.shape()[d];
  if (size == 0) {  // torch: `chunks` empty pieces
    return narrow_pieces(x, d, std::vector<int64_t>(static_cast<size_t>(chunks), 0));
  }
  return split(x, (size + chunks - 1) / chunks, d);
}

std::vector<Tensor> unbind(const Tensor& x, int dim) {
  const int d = split_dim("unbind", x, dim);
  std::vector<Tensor> pieces;
  for (int64_t i = 0; i < x.shape()[d]; ++i) pieces.push_back(select(x, d, i));
  return pieces;
}

}  // namespace tapegrad
