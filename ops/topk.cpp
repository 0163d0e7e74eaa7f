// topk: the k largest (or smallest) values along a dim, sorted, and their indices (torch.topk).
#include <utility>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dim.h>
#include <tapegrad/ops/detail/topk_row.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct TopkState {
  int dim;  // normalised to 0..rank-1
  int64_t k;
  bool largest;
  DimView view;            // the input as [outer, size, inner]
  const int64_t* indices;  // [outer, k, inner], from the tape's arena
};

void topk_backward(Tape& tape, const Node& node) {
  // Y = X[.., idx, ..] (the k largest or smallest)  =>  dX[.., idx_j, ..] += dY[.., j, ..]; zero
  // elsewhere
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const auto& s = node.state_as<TopkState>();
    const DimView& v = s.view;
    const T* dy = node.grad_as<const T>();
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t j = 0; j < s.k; ++j) {
        for (int64_t i = 0; i < v.inner; ++i) {
          const int64_t at = (o * s.k + j) * v.inner + i;
          dx[(o * v.size + s.indices[at]) * v.inner + i] += dy[at];
        }
      }
    }
  });
}

void topk_grad_graph(GradGraph& g) {
  // Y = X[.., idx, ..]  =>  dX += scatter(zeros(X), dim, idx, dY) (torch's
  // value_selecting_reduction_backward; the indices are distinct, a constant)
  const auto& s = g.state<TopkState>();
  const int dim = s.dim;
  const Shape out = g.node().shape;
  const Ids indices(out, std::vector<int64_t>(s.indices, s.indices + out.numel()));
  const Shape shape = g.input(0).shape();
  g.add(0, scatter(zeros(shape, g.grad().dtype()), dim, indices, g.grad()));
}

const OpDef kTopk{.name = "topk",
                  .backward = topk_backward,
                  .arguments =
                      [](const Tape&, const Node& n) {
                        const auto& s = n.state_as<TopkState>();
                        return "k = " + std::to_string(s.k) + ", dim " + std::to_string(s.dim) +
                               (s.largest ? "" : ", smallest");
                      },
                  .saves = saves::kNothing,
                  .state_bytes =
                      [](const Tape&, const Node& n) {
                        return static_cast<int64_t>(n.shape.numel() * sizeof(int64_t));
                      },
                  .grad_graph = topk_grad_graph};
TAPEGRAD_REGISTER_OP(kTopk);

}  // namespace

TopK topk(const Tensor& x, int64_t k, int dim, bool largest) {
  const DimReduction r = plan_dim_reduction("topk", x, dim, true);
  const DimView v = r.view;
  if (k < 0 || k > v.size) {
    throw_unary_error("topk", x,
                      "k = " + std::to_string(k) + " is out of range for dim " +
                          std::to_string(dim) + " of size " + std::to_string(v.size));
  }
  std::vector<int64_t> dims(x.shape().dims().begin(), x.shape().dims().end());
  if (!dims.empty()) dims[static_cast<size_t>(r.dim)] = k;
  const Shape out{std::span<const int64_t>(dims)};
  const int64_t n_out = out.numel();
  auto* indices = x.tape().arena().allocate_array<int64_t>(n_out);
  Tensor y = x.tape().record(kTopk, out, x.dtype(), {x}, TopkState{r.dim, k, largest, v, indices});
  dispatch(y.dtype(), [&]<class T>() {
    const T* xv = x.data<T>();
    T* yv = output_data<T>(y);
    std::vector<std::pair<double, int64_t>> queue(static_cast<size_t>(v.size));
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        for (int64_t j = 0; j < v.size; ++j) {
          queue[static_cast<size_t>(j)] = {xv[(o * v.size + j) * v.inner + i], j};
        }
        topk_sort(queue, k, largest);
        for (int64_t j = 0; j < k; ++j) {
          const int64_t at = (o * k + j) * v.inner + i;
          yv[at] = static_cast<T>(queue[static_cast<size_t>(j)].first);
          indices[at] = queue[static_cast<size_t>(j)].second;
        }
      }
    }
  });
  return {y, Ids(out, std::vector<int64_t>(indices, indices + n_out))};
}

}  // namespace tapegrad
