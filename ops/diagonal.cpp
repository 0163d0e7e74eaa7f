// diagonal and diag: a diagonal of two dims (torch.diagonal), and torch.diag's 1-D -> 2-D and
// 2-D -> 1-D forms; the 1-D form and diagonal's recorded backward are one op, diag_embed, that
// writes a tensor onto a diagonal of zeros (its own gradient is diagonal again).
#include <algorithm>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct DiagonalState {
  int64_t offset;
  int dim1, dim2;      // normalised
  const int64_t* map;  // the diagonal's elements: flat index into the full tensor, per element
};

// The full tensor's shape: `full`; the diagonal's shape and the map of its elements into it.
struct DiagonalPlan {
  Shape shape;
  std::vector<int64_t> map;
};

DiagonalPlan plan_diagonal(const Shape& full, int64_t offset, int dim1, int dim2) {
  const int rank = full.rank();
  const int64_t rows = full[dim1], cols = full[dim2];
  // Compared before negating: an offset beyond the tensor (INT64_MIN too) gives an empty diagonal.
  int64_t length = 0;
  if (offset >= 0 && offset < cols) length = std::min(rows, cols - offset);
  if (offset < 0 && offset > -rows) length = std::min(rows + offset, cols);
  const int64_t row0 = length > 0 && offset < 0 ? -offset : 0;
  const int64_t col0 = offset > 0 ? offset : 0;
  std::vector<int64_t> dims, rest;  // rest: the other dims of full, in order
  for (int d = 0; d < rank; ++d) {
    if (d != dim1 && d != dim2) {
      dims.push_back(full[d]);
      rest.push_back(d);
    }
  }
  dims.push_back(length);
  DiagonalPlan plan{Shape(std::span<const int64_t>(dims)), {}};
  const auto strides = full.strides();
  const int64_t n = plan.shape.numel();
  plan.map.resize(static_cast<size_t>(n));
  std::vector<int64_t> index(rest.size(), 0);
  int64_t base = 0;  // the rest dims' offset into full
  for (int64_t o = 0; o < n; o += length) {
    for (int64_t i = 0; i < length; ++i) {
      plan.map[static_cast<size_t>(o + i)] = base +
                                             (row0 + i) * strides[static_cast<size_t>(dim1)] +
                                             (col0 + i) * strides[static_cast<size_t>(dim2)];
    }
    for (int k = static_cast<int>(rest.size()) - 1; k >= 0; --k) {  // odometer over the rest
      const auto u = static_cast<size_t>(k);
      const int64_t stride = strides[static_cast<size_t>(rest[u])];
      base += stride;
      if (++index[u] < full[rest[u]]) break;
      base -= index[u] * stride;
      index[u] = 0;
    }
  }
  return plan;
}

std::string diagonal_arguments(const Tape&, const Node& n) {
  const auto& s = n.state_as<DiagonalState>();
  return "offset " + std::to_string(s.offset) + ", dims " + std::to_string(s.dim1) + ", " +
         std::to_string(s.dim2);
}

Tensor embed(const Tensor& d, const Shape& full, int64_t offset, int dim1, int dim2);

void diagonal_backward(Tape& tape, const Node& node) {
  // Y = diag(X)  =>  dX[map[o]] += dY[o] (zero off the diagonal)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const auto& s = node.state_as<DiagonalState>();
    const T* dy = node.grad_as<const T>();
    for (int64_t o = 0; o < node.shape.numel(); ++o) dx[s.map[o]] += dy[o];
  });
}

void diagonal_grad_graph(GradGraph& g) {
  // Y = diag(X)  =>  dX += diag_embed(dY) (dY on X's diagonal, zeros elsewhere)
  const auto& s = g.state<DiagonalState>();
  const int64_t offset = s.offset;
  const int dim1 = s.dim1, dim2 = s.dim2;
  const Shape full = g.input(0).shape();
  g.add(0, embed(g.grad(), full, offset, dim1, dim2));
}

void embed_backward(Tape& tape, const Node& node) {
  // Y = diag_embed(D) (D on a diagonal of zeros)  =>  dD[o] += dY[map[o]]
  dispatch(node.dtype, [&]<class T>() {
    T* dd = tape.input_grad<T>(node, 0).to_add();
    if (dd == nullptr) return;
    const auto& s = node.state_as<DiagonalState>();
    const T* dy = node.grad_as<const T>();
    const int64_t n = tape.input(node, 0).shape.numel();
    for (int64_t o = 0; o < n; ++o) dd[o] += dy[s.map[o]];
  });
}

void embed_grad_graph(GradGraph& g) {
  // Y = diag_embed(D)  =>  dD += diagonal(dY)
  const auto& s = g.state<DiagonalState>();
  g.add(0, diagonal(g.grad(), s.offset, s.dim1, s.dim2));
}

int64_t diagonal_state_bytes(const Tape& tape, const Node& n, bool embedded) {
  const int64_t count = embedded ? tape.input(n, 0).shape.numel() : n.shape.numel();
  return count * static_cast<int64_t>(sizeof(int64_t));
}

const OpDef kDiagonal{
    .name = "diagonal",
    .backward = diagonal_backward,
    .arguments = diagonal_arguments,
    .saves = saves::kNothing,
    .state_bytes = [](const Tape& t, const Node& n) { return diagonal_state_bytes(t, n, false); },
    .grad_graph = diagonal_grad_graph};
TAPEGRAD_REGISTER_OP(kDiagonal);

const OpDef kDiagEmbed{
    .name = "diag_embed",
    .backward = embed_backward,
    .arguments = diagonal_arguments,
    .saves = saves::kNothing,
    .state_bytes = [](const Tape& t, const Node& n) { return diagonal_state_bytes(t, n, true); },
    .grad_graph = embed_grad_graph};
TAPEGRAD_REGISTER_OP(kDiagEmbed);

const int64_t* arena_copy(Tape& tape, const std::vector<int64_t>& map) {
  auto* out = tape.arena().allocate_array<int64_t>(static_cast<int64_t>(map.size()));
  std::copy(map.begin(), map.end(), out);
  return out;
}

// d (the diagonal's shape) written onto the diagonal of zeros of shape `full`.
Tensor embed(const Tensor& d, const Shape& full, int64_t offset, int dim1, int dim2) {
  const DiagonalPlan plan = plan_diagonal(full, offset, dim1, dim2);
  const int64_t* map = arena_copy(d.tape(), plan.map);
  Tensor y =
      d.tape().record(kDiagEmbed, full, d.dtype(), {d}, DiagonalState{offset, dim1, dim2, map});
  dispatch(y.dtype(), [&]<class T>() {
    const T* dv = d.data<T>();
    T* yv = output_data<T>(y);
    std::fill(yv, yv + full.numel(), T(0));
    for (size_t o = 0; o < plan.map.size(); ++o) yv[plan.map[o]] = dv[o];
  });
  return y;
}

}  // namespace

Tensor diagonal(const Tensor& x, int64_t offset, int dim1, int dim2) {
  const Shape shape = x.shape();
  if (shape.rank() < 2) throw_unary_error("diagonal", x, "needs at least 2 dims");
  const int d1 = normalize_dim("diagonal", dim1, shape.rank());
  const int d2 = normalize_dim("diagonal", dim2, shape.rank());
  if (d1 == d2) {
    throw_unary_error("diagonal", x,
                      "dim1 and dim2 are the same dim (" + std::to_string(dim1) + ", " +
                          std::to_string(dim2) + ")");
  }
  const DiagonalPlan plan = plan_diagonal(shape, offset, d1, d2);
  const int64_t* map = arena_copy(x.tape(), plan.map);
  Tensor y =
      x.tape().record(kDiagonal, plan.shape, x.dtype(), {x}, DiagonalState{offset, d1, d2, map});
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    for (size_t o = 0; o < plan.map.size(); ++o) yv[o] = xv[plan.map[o]];
  });
  return y;
}

Tensor diag(const Tensor& x, int64_t offset) {
  const Shape shape = x.shape();
  if (shape.rank() == 2) return diagonal(x, offset, 0, 1);
  if (shape.rank() != 1) throw_unary_error("diag", x, "needs a 1-D or 2-D tensor");
  constexpr int64_t kLimit = int64_t{1} << 30;  // the matrix's side, squared, stays below 2^60
  if (offset > kLimit || offset < -kLimit) {
    throw_unary_error("diag", x, "offset " + std::to_string(offset) + " is too large");
  }
  const int64_t size = shape[0] + (offset < 0 ? -offset : offset);
  return embed(x, Shape{size, size}, offset, 0, 1);
}

}  // namespace tapegrad
