// stack: tensors of one shape joined along a new dim (torch.stack), copied in as blocks.
#include <string>

#include <tapegrad/ops/detail/layout_copy.h>
#include <tapegrad/ops/detail/view_op.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct StackState {
  int dim;  // the new dim, 0..rank(y)-1
};

void stack_backward(Tape& tape, const Node& node) {
  // Y[.., k, ..] = Xₖ (k along the new dim)  =>  dXₖ += dY[.., k, ..]
  dispatch(node.dtype, [&]<class T>() {
    const int dim = node.state_as<StackState>().dim;
    const int64_t inner = layout::inner_size(node.shape, dim);
    const int64_t outer = layout::outer_size(node.shape, dim);
    const int64_t n = node.shape[dim];
    for (int k = 0; k < node.num_inputs; ++k) {
      if (T* d = tape.input_grad<T>(node, k).to_add()) {
        layout::copy_blocks<true>(node.grad_as<const T>() + k * inner, n * inner, d, inner, outer,
                                  inner);
      }
    }
  });
}

void stack_grad_graph(GradGraph& g) {
  // Y[.., k, ..] = Xₖ  =>  dXₖ += select(dY, dim, k)
  const int dim = g.state<StackState>().dim;
  const int n = g.node().num_inputs;
  for (int k = 0; k < n; ++k) {
    if (g.needs(k)) g.add(k, select(g.grad(), dim, k));
  }
}

const OpDef kStack{.name = "stack",
                   .backward = stack_backward,
                   .arguments =
                       [](const Tape&, const Node& n) {
                         return dim_text(n.state_as<StackState>().dim, n.shape.rank());
                       },
                   .grad_graph = stack_grad_graph};
TAPEGRAD_REGISTER_OP(kStack);

}  // namespace

Tensor stack(std::span<const Tensor> xs, int dim) {
  if (xs.empty()) throw Error("stack: expected at least one tensor");
  const Tensor& first = xs[0];
  const int rank = first.rank() + 1;
  if (dim < -rank || dim >= rank) {
    throw Error("stack: " + describe("xs[0]", first) + ": dim " + std::to_string(dim) +
                " is out of range (expected " + std::to_string(-rank) + ".." +
                std::to_string(rank - 1) + ")");
  }
  if (rank > kMaxRank) {
    throw Error("stack: " + describe("xs[0]", first) + ": the result would have rank " +
                std::to_string(rank) + ", above the maximum of " + std::to_string(kMaxRank));
  }
  for (size_t k = 1; k < xs.size(); ++k) {
    const std::string role = "xs[" + std::to_string(k) + "]";
    const std::string pair = describe("xs[0]", first) + " and " + describe(role.c_str(), xs[k]);
    if (xs[k].dtype() != first.dtype()) {
      throw Error("stack: " + pair + ": dtypes differ (" + dtype_name(first.dtype()) + " vs " +
                  dtype_name(xs[k].dtype()) + ")");
    }
    if (xs[k].shape() != first.shape()) throw Error("stack: " + pair + ": shapes differ");
  }
  const int d = dim < 0 ? dim + rank : dim;
  std::array<int64_t, kMaxRank> dims{};
  for (int i = 0, j = 0; i < rank; ++i) {
    dims[static_cast<size_t>(i)] = i == d ? static_cast<int64_t>(xs.size()) : first.shape()[j++];
  }
  const Shape shape(std::span<const int64_t>(dims.data(), static_cast<size_t>(rank)));
  Tensor y = first.tape().record(kStack, shape, first.dtype(), xs, StackState{d});
  dispatch(y.dtype(), [&]<class T>() {
    const int64_t inner = layout::inner_size(shape, d);
    const int64_t outer = layout::outer_size(shape, d);
    const auto n = static_cast<int64_t>(xs.size());
    T* out = output_data<T>(y);
    for (int64_t k = 0; k < n; ++k) {
      layout::copy_blocks<false>(xs[static_cast<size_t>(k)].data<T>(), inner, out + k * inner,
                                 n * inner, outer, inner);
    }
  });
  return y;
}

}  // namespace tapegrad
