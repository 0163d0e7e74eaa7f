// flip: x with the order of some dims reversed (torch.flip), copied.
#include <string>

#include <tapegrad/ops/detail/layout_copy.h>
#include <tapegrad/ops/detail/view_op.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct FlipState {
  std::array<bool, kMaxRank> flipped;  // per dim of x
};

// Reads the contiguous `src` of shape `shape` flipped along the dims in `s` into (or adds it
// onto) the contiguous dst: flip is its own inverse, so forward and backward are this.
template <bool Accumulate, class T>
void flip_copy(const T* src, const Shape& shape, const FlipState& s, T* dst) {
  if (shape.numel() == 0) return;
  std::array<int64_t, kMaxRank> strides = shape.strides();
  int64_t start = 0;
  for (int d = 0; d < shape.rank(); ++d) {
    const auto k = static_cast<size_t>(d);
    if (!s.flipped[k]) continue;
    start += (shape[d] - 1) * strides[k];
    strides[k] = -strides[k];
  }
  layout::strided_copy<Accumulate>(
      src + start, shape.dims(),
      std::span<const int64_t>(strides.data(), static_cast<size_t>(shape.rank())), dst);
}

std::vector<int64_t> flipped_dims(const FlipState& s, int rank) {
  std::vector<int64_t> dims;
  for (int d = 0; d < rank; ++d) {
    if (s.flipped[static_cast<size_t>(d)]) dims.push_back(d);
  }
  return dims;
}

void flip_backward(Tape& tape, const Node& node) {
  // Y = X reversed along dims  =>  dX += dY reversed along dims
  dispatch(node.dtype, [&]<class T>() {
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      flip_copy<true>(node.grad_as<const T>(), node.shape, node.state_as<FlipState>(), d);
    }
  });
}

void flip_grad_graph(GradGraph& g) {
  // Y = X reversed along dims  =>  dX += flip(dY, dims)
  const std::vector<int64_t> dims = flipped_dims(g.state<FlipState>(), g.grad().rank());
  g.add(0, flip(g.grad(), dims));
}

const OpDef kFlip{.name = "flip",
                  .backward = flip_backward,
                  .arguments =
                      [](const Tape&, const Node& n) {
                        return "dims " +
                               int_list_text(flipped_dims(n.state_as<FlipState>(), n.shape.rank()));
                      },
                  .grad_graph = flip_grad_graph};
TAPEGRAD_REGISTER_OP(kFlip);

}  // namespace

Tensor flip(const Tensor& x, std::span<const int64_t> dims) {
  FlipState s{};
  for (int64_t dim : dims) {
    const int d = layout::checked_dim("flip", "x", x, narrow_dim(dim));
    if (x.rank() == 0) continue;
    if (s.flipped[static_cast<size_t>(d)]) {
      throw_unary_error("flip", x,
                        "dims " + int_list_text(dims) + " repeats dim " + std::to_string(d));
    }
    s.flipped[static_cast<size_t>(d)] = true;
  }
  Tensor y = x.tape().record(kFlip, x.shape(), x.dtype(), {x}, s);
  dispatch(y.dtype(),
           [&]<class T>() { flip_copy<false>(x.data<T>(), x.shape(), s, output_data<T>(y)); });
  return y;
}

Tensor flip(const Tensor& x, std::initializer_list<int64_t> dims) {
  return flip(x, std::span<const int64_t>(dims.begin(), dims.size()));
}

}  // namespace tapegrad
