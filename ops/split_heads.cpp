// split_heads: [B, T, C] -> [B, H, T, C/H], the book's view(b, T, H, D).transpose(1, 2), copied.
#include <tapegrad/ops/detail/layout_copy.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void split_heads_backward(Tape& tape, const Node& node) {
  // Y[b, h, t, d] = X[b, t, h·D + d]  =>  dX[b, t, h·D + d] += dY[b, h, t, d]
  dispatch(node.dtype, [&]<class T>() {
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      layout::swap_dims<true>(node.grad_as<const T>(), node.shape.dims(), 1, 2, d);
    }
  });
}

void split_heads_grad_graph(GradGraph& g) {
  // Y = X split into heads  =>  dX += merge_heads(dY)
  g.add(0, merge_heads(g.grad()));
}

const OpDef kSplitHeads{
    .name = "split_heads",
    .backward = split_heads_backward,
    .arguments = [](const Tape&, const Node& n) { return "H = " + std::to_string(n.shape[1]); },
    .grad_graph = split_heads_grad_graph};
TAPEGRAD_REGISTER_OP(kSplitHeads);

}  // namespace

Tensor split_heads(const Tensor& x, int64_t num_heads) {
  if (x.rank() != 3) throw_unary_error("split_heads", x, "expected a 3-D [B, T, C] tensor");
  if (num_heads <= 0) {
    throw_unary_error("split_heads", x,
                      "num_heads must be positive (got " + std::to_string(num_heads) + ")");
  }
  const int64_t b = x.shape()[0], t = x.shape()[1], c = x.shape()[2];
  if (c % num_heads != 0) {
    throw_unary_error(
        "split_heads", x,
        "C " + std::to_string(c) + " is not divisible by num_heads " + std::to_string(num_heads));
  }
  const int64_t dh = c / num_heads;
  Tensor y = x.tape().record(kSplitHeads, Shape{b, num_heads, t, dh}, x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const std::array<int64_t, 4> as_4d{b, t, num_heads, dh};
    layout::swap_dims<false>(x.data<T>(), as_4d, 1, 2, output_data<T>(y));
  });
  return y;
}

}  // namespace tapegrad
