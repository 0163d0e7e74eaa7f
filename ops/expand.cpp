// expand: x broadcast to a larger shape (torch.Tensor.expand; -1 keeps a size), as a copy.
#include <array>
#include <string>

#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void expand_backward(Tape& tape, const Node& node) {
  // Y = X broadcast to shape  =>  dX += reduce(dY)
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      reduce_broadcast(node.grad_as<const T>(), node.shape, d, x.shape);
    }
  });
}

void expand_grad_graph(GradGraph& g) {
  // Y = X broadcast to shape  =>  dX += sum_to_size(dY, shape(X))
  const Shape shape = g.input(0).shape();
  g.add(0, sum_to_size(g.grad(), shape));
}

const OpDef kExpand{.name = "expand",
                    .backward = expand_backward,
                    .arguments = [](const Tape&, const Node& n) { return n.shape.str(); },
                    .grad_graph = expand_grad_graph};
TAPEGRAD_REGISTER_OP(kExpand);

}  // namespace

Tensor expand(const Tensor& x, std::span<const int64_t> sizes) {
  const Shape in = x.shape();
  const int rank = static_cast<int>(sizes.size());
  bool ok = rank >= in.rank() && rank <= kMaxRank;
  std::array<int64_t, kMaxRank> dims{};
  for (int i = 0; i < rank && ok; ++i) {
    const int64_t size = sizes[static_cast<size_t>(i)];
    const int j = i - (rank - in.rank());  // x's dim aligned on the right, < 0 when new
    dims[static_cast<size_t>(i)] = size == -1 && j >= 0 ? in[j] : size;
    ok = size == -1 ? j >= 0 : size >= 0 && (j < 0 || in[j] == size || in[j] == 1);
  }
  if (!ok) {
    std::string text = "[";
    for (int i = 0; i < rank; ++i)
      text += (i ? ", " : "") + std::to_string(sizes[static_cast<size_t>(i)]);
    throw_unary_error("expand", x,
                      "cannot be expanded to " + text +
                          "] (each size must match x's, or x's be 1; new dims on the "
                          "left, not -1)");
  }
  const Shape out(std::span<const int64_t>(dims.data(), static_cast<size_t>(rank)));
  Tensor y = x.tape().record(kExpand, out, x.dtype(), {x});
  if (out.numel() == 0) return y;
  dispatch(y.dtype(), [&]<class T>() {
    broadcast_apply<false>(output_data<T>(y), out, x.data<T>(), in, x.data<T>(), in,
                           [](const auto& a, const auto&) { return a; });
  });
  return y;
}

}  // namespace tapegrad
