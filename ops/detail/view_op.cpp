// The reshaping ops' shared backward (view_op.h).
#include <tapegrad/ops/detail/view_op.h>

#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

void view_backward(Tape& tape, const Node& node) {
  // Y = X read in a new shape  =>  dX += dY read in X's shape
  dispatch(node.dtype, [&]<class T>() {
    const auto [d, overwrite, numel] = tape.input_grad<T>(node, 0);  // written when still zero
    if (d == nullptr) return;
    if (overwrite) {
      layout::copy_run<false>(node.grad_as<const T>(), d, numel);
    } else {
      layout::copy_run<true>(node.grad_as<const T>(), d, numel);
    }
  });
}

void view_grad_graph(GradGraph& g) {
  // Y = X read in a new shape  =>  dX += dY read in X's shape
  const Shape shape = g.input(0).shape();
  g.add(0, reshape(g.grad(), shape.dims()));
}

std::string int_list_text(std::span<const int64_t> values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

void check_result_rank(const char* op, const Tensor& x, int rank) {
  if (rank > kMaxRank) {
    throw_unary_error(op, x,
                      "the result would have rank " + std::to_string(rank) +
                          ", above the maximum of " + std::to_string(kMaxRank));
  }
}

}  // namespace tapegrad
