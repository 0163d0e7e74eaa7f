// repeat: x tiled `repeats` times along each dim, new dims on the left (torch.Tensor.repeat).
#include <string>

#include <tapegrad/ops/detail/layout_copy.h>
#include <tapegrad/ops/detail/view_op.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct RepeatState {
  int rank;                            // y's rank, repeats.size()
  std::array<int64_t, kMaxRank> tile;  // x's shape padded on the left with 1s to y's rank
};

// Calls f(y_index, x_index) for every element of y: y[i₀, ..] = x[i₀ mod t₀, ..].
template <class F>
void for_each_tiled(const Shape& out, const RepeatState& s, F&& f) {
  std::array<int64_t, kMaxRank> strides{};
  int64_t stride = 1;
  for (int d = s.rank - 1; d >= 0; --d) {
    strides[static_cast<size_t>(d)] = stride;
    stride *= s.tile[static_cast<size_t>(d)];
  }
  layout::for_each_position(out.dims(), [&](int64_t o, const std::array<int64_t, kMaxRank>& at) {
    int64_t i = 0;
    for (int d = 0; d < s.rank; ++d) {
      const auto k = static_cast<size_t>(d);
      i += (at[k] % s.tile[k]) * strides[k];
    }
    f(o, i);
  });
}

void repeat_backward(Tape& tape, const Node& node) {
  // Y = X tiled  =>  dX[i] += Σ over the tiles of dY at i's copies
  dispatch(node.dtype, [&]<class T>() {
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      const T* dy = node.grad_as<const T>();
      for_each_tiled(node.shape, node.state_as<RepeatState>(),
                     [&](int64_t o, int64_t i) { d[i] += dy[o]; });
    }
  });
}

void repeat_grad_graph(GradGraph& g) {
  // Y = X tiled  =>  dX += dY summed over the tiles: per dim, [outer, r, t·inner] summed over r
  const RepeatState s = g.state<RepeatState>();
  const Shape x_shape = g.input(0).shape();
  Shape shape = g.grad().shape();
  Tensor d = g.grad();
  for (int k = 0; k < s.rank; ++k) {
    const int64_t t = s.tile[static_cast<size_t>(k)];
    if (shape[k] == t) continue;  // repeated once
    const int64_t outer = layout::outer_size(shape, k), inner = layout::inner_size(shape, k);
    const int64_t r = t == 0 ? 0 : shape[k] / t;
    d = sum(reshape(d, {outer, r, t * inner}), 1);
    shape[k] = t;
    d = reshape(d, shape.dims());
  }
  g.add(0, reshape(d, x_shape.dims()));
}

const OpDef kRepeat{.name = "repeat",
                    .backward = repeat_backward,
                    .arguments = [](const Tape&, const Node& n) { return n.shape.str(); },
                    .grad_graph = repeat_grad_graph};
TAPEGRAD_REGISTER_OP(kRepeat);

}  // namespace

Tensor repeat(const Tensor& x, std::span<const int64_t> repeats) {
  const int rank = static_cast<int>(repeats.size());
  if (rank < x.rank()) {
    throw_unary_error("repeat", x,
                      "repeats " + int_list_text(repeats) + " has fewer entries than x has dims");
  }
  check_result_rank("repeat", x, rank);
  RepeatState s{rank, {}};
  std::array<int64_t, kMaxRank> dims{};
  const int pad = rank - x.rank();
  for (int d = 0; d < rank; ++d) {
    const auto k = static_cast<size_t>(d);
    if (repeats[k] < 0) {
      throw_unary_error("repeat", x, "repeats " + int_list_text(repeats) + " has a negative entry");
    }
    s.tile[k] = d < pad ? 1 : x.shape()[d - pad];
    if (s.tile[k] > 0 && repeats[k] > (int64_t{1} << 60) / s.tile[k]) {
      throw_unary_error("repeat", x, "repeats " + int_list_text(repeats) + " is too large");
    }
    dims[k] = s.tile[k] * repeats[k];
  }
  const Shape out(std::span<const int64_t>(dims.data(), static_cast<size_t>(rank)));
  Tensor y = x.tape().record(kRepeat, out, x.dtype(), {x}, s);
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    for_each_tiled(out, s, [&](int64_t o, int64_t i) { yv[o] = xv[i]; });
  });
  return y;
}

Tensor repeat(const Tensor& x, std::initializer_list<int64_t> repeats) {
  return repeat(x, std::span<const int64_t>(repeats.begin(), repeats.size()));
}

}  // namespace tapegrad
