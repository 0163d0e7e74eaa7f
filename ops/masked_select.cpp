// masked_select: the elements of x where a (broadcast) mask is nonzero, as a 1-D tensor in
// row-major order (torch.masked_select); the gradient scatters back into zeros.
#include <string>
#include <utility>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct MaskedSelectState {
  const int64_t* positions;  // each pick's row-major index in broadcast(x, mask), from the arena
  const int64_t* from;       // each pick's index in x (its broadcast read)
  Shape broadcast;           // broadcast(x, mask)
};

void masked_select_backward(Tape& tape, const Node& node) {
  // Y_k = X_b[p_k], X_b = X broadcast with the mask  =>  dX += reduce(masked_scatter(zeros, M,
  // dY)): dX[from_k] += dY_k (torch's masked_select_backward, summed to X's shape)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const auto& s = node.state_as<MaskedSelectState>();
    const T* dy = node.grad_as<const T>();
    for (int64_t k = 0; k < node.shape.numel(); ++k) dx[s.from[k]] += dy[k];
  });
}

void masked_select_grad_graph(GradGraph& g) {
  // dX += sum_to_size(reshape(index_add(zeros([N]), 0, p, dY), broadcast), X), N the broadcast
  // size and p the picks' positions there (a constant); index_add's recorded backward selects
  const auto& s = g.state<MaskedSelectState>();
  const Shape broadcast = s.broadcast;
  const int64_t n = g.output().shape()[0];
  const Ids positions(Shape{n}, std::vector<int64_t>(s.positions, s.positions + n));
  const Shape shape = g.input(0).shape();
  const Tensor flat =
      index_add(zeros(Shape{broadcast.numel()}, g.grad().dtype()), 0, positions, g.grad());
  g.add(0, sum_to_size(reshape(flat, broadcast.dims()), shape));
}

const OpDef kMaskedSelect{
    .name = "masked_select",
    .backward = masked_select_backward,
    .arguments =
        [](const Tape&, const Node& n) {
          return std::to_string(n.shape[0]) + " of " +
                 std::to_string(n.state_as<MaskedSelectState>().broadcast.numel());
        },
    .saves = saves::kNothing,
    .state_bytes =
        [](const Tape&, const Node& n) {
          return static_cast<int64_t>(2 * n.shape.numel() * sizeof(int64_t));
        },
    .grad_graph = masked_select_grad_graph};
TAPEGRAD_REGISTER_OP(kMaskedSelect);

}  // namespace

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  bool ok = false;
  const Shape out = broadcast_shape(x.shape(), mask.shape(), &ok);
  if (!ok) {
    throw Error("masked_select: " + describe("x", x) + ", " + describe("mask", mask) +
                ": the shapes do not broadcast");
  }
  // The picks first: their count is the output's shape.
  std::vector<int64_t> positions, from;
  dispatch(mask.dtype(), [&]<class M>() {
    const M* m = mask.data<M>();
    for_each_broadcast(out, broadcast_strides(x.shape(), out), broadcast_strides(mask.shape(), out),
                       [&](int64_t o, int64_t xi, int64_t mi) {
                         if (m[mi] != M(0)) {  // NaN counts as true, as everywhere masks are read
                           positions.push_back(o);
                           from.push_back(xi);
                         }
                       });
  });
  const auto n = static_cast<int64_t>(positions.size());
  Arena& arena = x.tape().arena();
  int64_t* saved_positions = arena.allocate_array<int64_t>(n);
  int64_t* saved_from = arena.allocate_array<int64_t>(n);
  for (int64_t k = 0; k < n; ++k) {
    saved_positions[k] = positions[static_cast<size_t>(k)];
    saved_from[k] = from[static_cast<size_t>(k)];
  }
  Tensor y = x.tape().record(kMaskedSelect, Shape{n}, x.dtype(), {x, mask},
                             MaskedSelectState{saved_positions, saved_from, out});
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    for (int64_t k = 0; k < n; ++k) yv[k] = xv[saved_from[k]];
  });
  return y;
}

}  // namespace tapegrad
