// roll: x's elements shifted cyclically along dims, or along the flattened x (torch.roll).
#include <string>

#include <tapegrad/ops/detail/layout_copy.h>
#include <tapegrad/ops/detail/view_op.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct RollState {
  bool flat;                            // no dims given: x rolled as one flat row
  std::array<int64_t, kMaxRank> shift;  // per dim of x in 0..size-1 (flat: shift[0] of numel)
};

int64_t wrapped(int64_t shift, int64_t n) {
  return n == 0 ? 0 : ((shift % n) + n) % n;
}

// Forward: to[(i + s) mod n] = from[i] (per dim). Backward: to[i] += from[(i + s) mod n], `from`
// being dY and `to` dX.
template <bool Backward, class T>
void roll_apply(const T* from, const Shape& shape, const RollState& s, T* to) {
  const int64_t numel = shape.numel();
  if (numel == 0) return;
  if (s.flat) {
    const int64_t k = s.shift[0], head = numel - k;
    if constexpr (Backward) {
      layout::copy_run<true>(from + k, to, head);
      layout::copy_run<true>(from, to + head, k);
    } else {
      layout::copy_run<false>(from, to + k, head);
      layout::copy_run<false>(from + head, to, k);
    }
    return;
  }
  const std::array<int64_t, kMaxRank> strides = shape.strides();
  layout::for_each_position(shape.dims(), [&](int64_t i, const std::array<int64_t, kMaxRank>& at) {
    int64_t o = 0;
    for (int d = 0; d < shape.rank(); ++d) {
      const auto k = static_cast<size_t>(d);
      int64_t j = at[k] + s.shift[k];
      if (j >= shape[d]) j -= shape[d];
      o += j * strides[k];
    }
    if constexpr (Backward) {
      to[i] += from[o];
    } else {
      to[o] = from[i];
    }
  });
}

void roll_backward(Tape& tape, const Node& node) {
  // Y[(i + s) mod n] = X[i]  =>  dX[i] += dY[(i + s) mod n]
  dispatch(node.dtype, [&]<class T>() {
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      roll_apply<true>(node.grad_as<const T>(), node.shape, node.state_as<RollState>(), d);
    }
  });
}

void roll_grad_graph(GradGraph& g) {
  // Y = X rolled by s  =>  dX += dY rolled by −s
  const RollState s = g.state<RollState>();
  const int rank = g.grad().rank();
  if (s.flat) {
    g.add(0, roll(g.grad(), -s.shift[0]));
    return;
  }
  std::vector<int64_t> shifts, dims;
  for (int d = 0; d < rank; ++d) {
    shifts.push_back(-s.shift[static_cast<size_t>(d)]);
    dims.push_back(d);
  }
  g.add(0, roll(g.grad(), shifts, dims));
}

const OpDef kRoll{.name = "roll",
                  .backward = roll_backward,
                  .arguments =
                      [](const Tape&, const Node& n) {
                        const RollState& s = n.state_as<RollState>();
                        if (s.flat) return "shift " + std::to_string(s.shift[0]) + ", flattened";
                        return "shifts " +
                               int_list_text(std::span<const int64_t>(
                                   s.shift.data(), static_cast<size_t>(n.shape.rank())));
                      },
                  .grad_graph = roll_grad_graph};
TAPEGRAD_REGISTER_OP(kRoll);

}  // namespace

Tensor roll(const Tensor& x, std::span<const int64_t> shifts, std::span<const int64_t> dims) {
  RollState s{dims.empty(), {}};
  if (dims.empty()) {
    if (shifts.size() != 1) {
      throw_unary_error(
          "roll", x,
          "shifts " + int_list_text(shifts) + " must hold one shift when no dims are given");
    }
    s.shift[0] = wrapped(shifts[0], x.numel());
  } else {
    if (shifts.size() != dims.size()) {
      throw_unary_error("roll", x,
                        "shifts " + int_list_text(shifts) + " and dims " + int_list_text(dims) +
                            " differ in length");
    }
    if (x.rank() == 0) throw_unary_error("roll", x, "cannot roll a 0-dim tensor along a dim");
    for (size_t i = 0; i < dims.size(); ++i) {
      const int d = layout::checked_dim("roll", "x", x, narrow_dim(dims[i]));
      const auto k = static_cast<size_t>(d);
      s.shift[k] = wrapped(s.shift[k] + wrapped(shifts[i], x.shape()[d]), x.shape()[d]);
    }
  }
  Tensor y = x.tape().record(kRoll, x.shape(), x.dtype(), {x}, s);
  dispatch(y.dtype(),
           [&]<class T>() { roll_apply<false>(x.data<T>(), x.shape(), s, output_data<T>(y)); });
  return y;
}

Tensor roll(const Tensor& x, std::initializer_list<int64_t> shifts,
            std::initializer_list<int64_t> dims) {
  return roll(x, std::span<const int64_t>(shifts.begin(), shifts.size()),
              std::span<const int64_t>(dims.begin(), dims.size()));
}

Tensor roll(const Tensor& x, int64_t shift) {
  return roll(x, std::span<const int64_t>(&shift, 1), {});
}

Tensor roll(const Tensor& x, int64_t shift, int dim) {
  const int64_t d = dim;
  return roll(x, std::span<const int64_t>(&shift, 1), std::span<const int64_t>(&d, 1));
}

}  // namespace tapegrad
