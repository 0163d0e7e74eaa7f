// merge_heads: [B, H, T, D] -> [B, T, H·D], the book's transpose(1, 2).contiguous().view(b, T, C).
#include <tapegrad/ops/detail/layout_copy.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void merge_heads_backward(Tape& tape, const Node& node) {
  // Y[b, t, h·D + d] = X[b, h, t, d]  =>  dX[b, h, t, d] += dY[b, t, h·D + d]
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      const std::array<int64_t, 4> dy_4d{x.shape[0], x.shape[2], x.shape[1], x.shape[3]};
      layout::swap_dims<true>(node.grad_as<const T>(), dy_4d, 1, 2, d);
    }
  });
}

void merge_heads_grad_graph(GradGraph& g) {
  // Y = X's heads merged  =>  dX += split_heads(dY)
  g.add(0, split_heads(g.grad(), g.input(0).shape()[1]));
}

const OpDef kMergeHeads{
    .name = "merge_heads",
    .backward = merge_heads_backward,
    .arguments = [](const Tape& t,
                    const Node& n) { return "H = " + std::to_string(t.input(n, 0).shape[1]); },
    .grad_graph = merge_heads_grad_graph};
TAPEGRAD_REGISTER_OP(kMergeHeads);

}  // namespace

Tensor merge_heads(const Tensor& x) {
  if (x.rank() != 4) throw_unary_error("merge_heads", x, "expected a 4-D [B, H, T, D] tensor");
  const int64_t b = x.shape()[0], h = x.shape()[1], t = x.shape()[2], dh = x.shape()[3];
  Tensor y = x.tape().record(kMergeHeads, Shape{b, t, h * dh}, x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    layout::swap_dims<false>(x.data<T>(), x.shape().dims(), 1, 2, output_data<T>(y));
  });
  return y;
}

}  // namespace tapegrad
