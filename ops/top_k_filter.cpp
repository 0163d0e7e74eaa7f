// top_k_filter: the book's top-k sampling filter (§5.3), values below a row's k-th largest -> -inf.
#include <limits>
#include <memory>
#include <span>
#include <utility>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/topk_row.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct TopKFilterState {
  int64_t k;
  int64_t size;              // the last dim
  const double* min_values;  // [rows]: each row's k-th largest, from the tape's arena
};

void top_k_filter_backward(Tape& tape, const Node& node) {
  // Y = where(X < m, -inf, X), m the row's k-th largest (no gradient through the condition)
  //   =>  dX += dY where !(X < m)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const auto& s = node.state_as<TopKFilterState>();
    const T* x = tape.input(node, 0).value_as<T>();
    const T* dy = node.grad_as<const T>();
    const int64_t n = node.shape.numel();
    for (int64_t i = 0; i < n; ++i) {
      if (!(x[i] < s.min_values[i / s.size])) dx[i] += dy[i];
    }
  });
}

void top_k_filter_grad_graph(GradGraph& g) {
  // Y = where(X < m, -inf, X)  =>  dX += dY ⊙ [X ≥ m]   (the mask is a constant)
  const TopKFilterState s = g.state<TopKFilterState>();
  const Tensor x = g.input(0);
  std::vector<double> keep = x.values();
  for (size_t i = 0; i < keep.size(); ++i) {
    keep[i] = keep[i] < s.min_values[static_cast<int64_t>(i) / s.size] ? 0.0 : 1.0;
  }
  const Tensor mask = from_values(x.shape(), keep, x.dtype());
  g.add(0, mul(g.grad(), mask));
}

const OpDef kTopKFilter{
    .name = "top_k_filter",
    .backward = top_k_filter_backward,
    .arguments =
        [](const Tape&, const Node& n) {
          return "k = " + std::to_string(n.state_as<TopKFilterState>().k);
        },
    .saves = saves::kInput0,
    .state_bytes =
        [](const Tape&, const Node& n) {
          const auto& s = n.state_as<TopKFilterState>();
          return static_cast<int64_t>(n.shape.numel() / s.size * sizeof(double));
        },
    .grad_graph = top_k_filter_grad_graph};
TAPEGRAD_REGISTER_OP(kTopKFilter);

}  // namespace

Tensor top_k_filter(const Tensor& x, int64_t k) {
  if (x.rank() == 0 || x.size(-1) == 0) {
    throw_unary_error("top_k_filter", x, "x must have a last dim of at least one value");
  }
  const int64_t size = x.size(-1);
  if (k < 1 || k > size) {
    throw_unary_error("top_k_filter", x,
                      "k = " + std::to_string(k) + " must be in [1, " + std::to_string(size) +
                          "] (the last dim)");
  }
  const int64_t rows = x.numel() / size;
  Arena& arena = x.tape().arena();
  auto* min_values = arena.allocate_array<double>(rows);
  // One row's (value, index) pairs for topk's sort; scratch given back at the tape's next reset.
  std::span<std::pair<double, int64_t>> queue(
      arena.allocate_array<std::pair<double, int64_t>>(size), static_cast<size_t>(size));
  Tensor y =
      x.tape().record(kTopKFilter, x.shape(), x.dtype(), {x}, TopKFilterState{k, size, min_values});
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = xv + r * size;
      for (int64_t j = 0; j < size; ++j)
        std::construct_at(&queue[static_cast<size_t>(j)], row[j], j);
      topk_sort(queue, k);
      // min_val = topk(x, k).values[:, -1]; torch.where(x < min_val, -inf, x)
      const double min_val = queue[static_cast<size_t>(k - 1)].first;
      min_values[r] = min_val;
      for (int64_t j = 0; j < size; ++j) {
        yv[r * size + j] = row[j] < min_val ? -std::numeric_limits<T>::infinity() : row[j];
      }
    }
  });
  return y;
}

}  // namespace tapegrad
