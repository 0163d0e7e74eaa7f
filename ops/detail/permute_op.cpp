// The permutation copy permute and movedim share (permute_op.h).
#include <tapegrad/ops/detail/permute_op.h>

#include <span>

#include <tapegrad/ops/detail/layout_copy.h>
#include <tapegrad/ops/detail/view_op.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// The strides to read a contiguous tensor of shape `in` as its permutation by `perm`.
std::array<int64_t, kMaxRank> permuted_strides(const Shape& in, const PermuteState& s) {
  const std::array<int64_t, kMaxRank> strides = in.strides();
  std::array<int64_t, kMaxRank> out{};
  for (int d = 0; d < s.rank; ++d) {
    out[static_cast<size_t>(d)] = strides[static_cast<size_t>(s.perm[static_cast<size_t>(d)])];
  }
  return out;
}

PermuteState inverse(const PermuteState& s) {
  PermuteState inv{s.rank, {}};
  for (int d = 0; d < s.rank; ++d) {
    inv.perm[static_cast<size_t>(s.perm[static_cast<size_t>(d)])] = d;
  }
  return inv;
}

}  // namespace

void permute_backward(Tape& tape, const Node& node) {
  // Y = permute(X, p)  =>  dX += permute(dY, p⁻¹)
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      const PermuteState inv = inverse(node.state_as<PermuteState>());
      const std::array<int64_t, kMaxRank> strides = permuted_strides(node.shape, inv);
      layout::strided_copy<true>(node.grad_as<const T>(), x.shape.dims(),
                                 std::span<const int64_t>(strides.data(), x.shape.dims().size()),
                                 d);
    }
  });
}

void permute_grad_graph(GradGraph& g) {
  // Y = permute(X, p)  =>  dX += permute(dY, p⁻¹)
  const PermuteState inv = inverse(g.state<PermuteState>());
  g.add(0, permute(g.grad(),
                   std::span<const int64_t>(inv.perm.data(), static_cast<size_t>(inv.rank))));
}

std::string permute_arguments(const Tape&, const Node& n) {
  const PermuteState& s = n.state_as<PermuteState>();
  return "dims " +
         int_list_text(std::span<const int64_t>(s.perm.data(), static_cast<size_t>(s.rank)));
}

Tensor record_permute(const OpDef& op, const Tensor& x, const PermuteState& state) {
  const Shape in = x.shape();
  std::array<int64_t, kMaxRank> dims{};
  for (int d = 0; d < state.rank; ++d) {
    dims[static_cast<size_t>(d)] = in[static_cast<int>(state.perm[static_cast<size_t>(d)])];
  }
  const auto rank = static_cast<size_t>(state.rank);
  const Shape out(std::span<const int64_t>(dims.data(), rank));
  Tensor y = x.tape().record(op, out, x.dtype(), {x}, state);
  const std::array<int64_t, kMaxRank> strides = permuted_strides(in, state);
  dispatch(y.dtype(), [&]<class T>() {
    layout::strided_copy<false>(x.data<T>(), out.dims(),
                                std::span<const int64_t>(strides.data(), rank), output_data<T>(y));
  });
  return y;
}

}  // namespace tapegrad
