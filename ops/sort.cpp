// sort and argsort: the values along a dim in order and where each came from (torch.sort,
// torch.argsort), with torch's CPU kernel's NaN rule and its order of equal values.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dim.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct SortState {
  int dim;  // normalised to 0..rank-1
  bool descending;
  bool stable;
  DimView view;            // the input as [outer, size, inner]
  const int64_t* indices;  // x's shape, from the tape's arena
};

// Each row along dim sorted as torch 1.13's sort_kernel sorts it: (value, index) pairs moved
// together by std::sort, or std::stable_sort when stable, with KeyValueCompAsc / Desc (NaN as
// the largest value). The pairs' permutation depends only on the comparisons, so equal values
// end where torch's (same libstdc++, GCC 12.2 here) leaves them.
template <class T>
void sort_rows(const T* x, const DimView& v, bool descending, bool stable, T* values,
               int64_t* indices) {
  using Entry = std::pair<T, int64_t>;
  std::vector<Entry> row(static_cast<size_t>(v.size));
  const auto ascending = [](const Entry& a, const Entry& b) {
    return (!std::isnan(a.first) && std::isnan(b.first)) || a.first < b.first;
  };
  const auto falling = [](const Entry& a, const Entry& b) {
    return (std::isnan(a.first) && !std::isnan(b.first)) || a.first > b.first;
  };
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      for (int64_t j = 0; j < v.size; ++j)
        row[static_cast<size_t>(j)] = {x[(o * v.size + j) * v.inner + i], j};
      if (descending && stable) std::stable_sort(row.begin(), row.end(), falling);
      if (descending && !stable) std::sort(row.begin(), row.end(), falling);
      if (!descending && stable) std::stable_sort(row.begin(), row.end(), ascending);
      if (!descending && !stable) std::sort(row.begin(), row.end(), ascending);
      for (int64_t j = 0; j < v.size; ++j) {
        const int64_t at = (o * v.size + j) * v.inner + i;
        if (values != nullptr) values[at] = row[static_cast<size_t>(j)].first;
        indices[at] = row[static_cast<size_t>(j)].second;
      }
    }
  }
}

void sort_backward(Tape& tape, const Node& node) {
  // Y = X[.., idx, ..] (a permutation along dim)  =>  dX[.., idx_j, ..] += dY[.., j, ..]
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const auto& s = node.state_as<SortState>();
    const DimView& v = s.view;
    const T* dy = node.grad_as<const T>();
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t j = 0; j < v.size; ++j) {
        for (int64_t i = 0; i < v.inner; ++i) {
          const int64_t at = (o * v.size + j) * v.inner + i;
          dx[(o * v.size + s.indices[at]) * v.inner + i] += dy[at];
        }
      }
    }
  });
}

void sort_grad_graph(GradGraph& g) {
  // Y = X[.., idx, ..]  =>  dX += scatter(zeros(X), dim, idx, dY) (torch's
  // value_selecting_reduction_backward; the indices a constant permutation)
  const auto& s = g.state<SortState>();
  const int dim = s.dim;
  const Shape shape = g.input(0).shape();
  const Ids indices(shape, std::vector<int64_t>(s.indices, s.indices + shape.numel()));
  g.add(0, scatter(zeros(shape, g.grad().dtype()), dim, indices, g.grad()));
}

const OpDef kSort{.name = "sort",
                  .backward = sort_backward,
                  .arguments =
                      [](const Tape&, const Node& n) {
                        const auto& s = n.state_as<SortState>();
                        return "dim " + std::to_string(s.dim) +
                               (s.descending ? ", descending" : "") + (s.stable ? ", stable" : "");
                      },
                  .saves = saves::kNothing,
                  .state_bytes =
                      [](const Tape&, const Node& n) {
                        return static_cast<int64_t>(n.shape.numel() * sizeof(int64_t));
                      },
                  .grad_graph = sort_grad_graph};
TAPEGRAD_REGISTER_OP(kSort);

}  // namespace

Sorted sort(const Tensor& x, int dim, bool descending, bool stable) {
  const DimReduction r = plan_dim_reduction("sort", x, dim, true);
  const Shape shape = x.shape();
  const int64_t n = shape.numel();
  auto* indices = x.tape().arena().allocate_array<int64_t>(n);
  Tensor y = x.tape().record(kSort, shape, x.dtype(), {x},
                             SortState{r.dim, descending, stable, r.view, indices});
  dispatch(y.dtype(), [&]<class T>() {
    sort_rows(x.data<T>(), r.view, descending, stable, output_data<T>(y), indices);
  });
  return {y, Ids(shape, std::vector<int64_t>(indices, indices + n))};
}

Ids argsort(const Tensor& x, int dim, bool descending, bool stable) {
  const DimReduction r = plan_dim_reduction("argsort", x, dim, true);
  const Shape shape = x.shape();
  std::vector<int64_t> indices(static_cast<size_t>(shape.numel()));
  dispatch(x.dtype(), [&]<class T>() {
    sort_rows<T>(x.data<T>(), r.view, descending, stable, nullptr, indices.data());
  });
  return Ids(shape, std::move(indices));
}

}  // namespace tapegrad
