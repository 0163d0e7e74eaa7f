// cat: joins tensors along one dim (all other dims equal), copying each in as a block.
#include <tapegrad/ops/detail/layout_copy.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct CatState {
  int dim;  // normalised to 0..rank-1
};

void cat_backward(Tape& tape, const Node& node) {
  // Y = [X₀ | X₁ | ...] along dim  =>  dXₖ += the slice of dY that Xₖ filled
  dispatch(node.dtype, [&]<class T>() {
    const int dim = node.state_as<CatState>().dim;
    const int64_t inner = layout::inner_size(node.shape, dim);
    const int64_t outer = layout::outer_size(node.shape, dim);
    const int64_t y_step = node.shape[dim] * inner;
    const T* dy = node.grad_as<const T>();
    int64_t offset = 0;
    for (int k = 0; k < node.num_inputs; ++k) {
      const Node& x = tape.input(node, k);
      const int64_t run = x.shape[dim] * inner;
      if (T* d = tape.input_grad<T>(node, k).to_add()) {
        layout::copy_blocks<true>(dy + offset, y_step, d, run, outer, run);
      }
      offset += run;
    }
  });
}

void cat_grad_graph(GradGraph& g) {
  // Y = [X₀ | X₁ | ...] along dim  =>  dXₖ += the slice of dY that Xₖ filled
  const int dim = g.state<CatState>().dim;
  int64_t start = 0;
  for (int k = 0; k < g.node().num_inputs; ++k) {
    const int64_t length = g.input(k).shape()[dim];
    if (g.needs(k)) g.add(k, narrow(g.grad(), dim, start, length));
    start += length;
  }
}

const OpDef kCat{
    .name = "cat",
    .backward = cat_backward,
    .arguments = [](const Tape&,
                    const Node& n) { return dim_text(n.state_as<CatState>().dim, n.shape.rank()); },
    .grad_graph = cat_grad_graph};
TAPEGRAD_REGISTER_OP(kCat);

std::string role(size_t k) {
  return "xs[" + std::to_string(k) + "]";
}

}  // namespace

Tensor cat(std::span<const Tensor> xs, int dim) {
  if (xs.empty()) throw Error("cat: expected at least one tensor");
  const Tensor& first = xs[0];
  if (first.rank() == 0) {
    throw Error("cat: " + describe("xs[0]", first) + ": a 0-dim tensor cannot be concatenated");
  }
  const int d = layout::checked_dim("cat", "xs[0]", first, dim);
  Shape shape = first.shape();
  shape[d] = 0;
  for (size_t k = 0; k < xs.size(); ++k) {
    const Tensor& x = xs[k];
    const std::string pair = describe("xs[0]", first) + " and " + describe(role(k).c_str(), x);
    if (x.dtype() != first.dtype()) {
      throw Error("cat: " + pair + ": dtypes differ (" + dtype_name(first.dtype()) + " vs " +
                  dtype_name(x.dtype()) + ")");
    }
    if (x.rank() != first.rank()) {
      throw Error("cat: " + pair + ": ranks differ (" + std::to_string(first.rank()) + " vs " +
                  std::to_string(x.rank()) + ")");
    }
    for (int i = 0; i < x.rank(); ++i) {
      if (i != d && x.shape()[i] != first.shape()[i]) {
        throw Error("cat: " + pair + ": sizes differ in dim " + std::to_string(i) + " (" +
                    std::to_string(first.shape()[i]) + " vs " + std::to_string(x.shape()[i]) +
                    ") when joining along dim " + std::to_string(d));
      }
    }
    shape[d] += x.shape()[d];
  }
  Tensor y = first.tape().record(kCat, shape, first.dtype(), xs, CatState{d});
  dispatch(y.dtype(), [&]<class T>() {
    const int64_t inner = layout::inner_size(shape, d);
    const int64_t outer = layout::outer_size(shape, d);
    const int64_t y_step = shape[d] * inner;
    T* out = output_data<T>(y);
    int64_t offset = 0;
    for (const Tensor& x : xs) {
      const int64_t run = x.shape()[d] * inner;
      layout::copy_blocks<false>(x.data<T>(), run, out + offset, y_step, outer, run);
      offset += run;
    }
  });
  return y;
}

}  // namespace tapegrad
