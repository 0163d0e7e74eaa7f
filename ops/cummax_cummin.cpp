// cummax and cummin: the running maximum / minimum along a dim and where it sits (torch.cummax,
// torch.cummin), with torch's CPU kernel's tie and NaN rules.
#include <cmath>
#include <functional>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/reduce_dim.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct CummaxCumminState {
  int dim;                 // normalised to 0..rank-1 (0 for a scalar)
  DimView view;            // the input as [outer, size, inner]
  const int64_t* indices;  // x's shape, from the tape's arena
};

// torch 1.13's cummax_cummin_helper: an element replaces the running extreme when it is NaN, or
// when neither is NaN and it compares >= (cummax) or <= (cummin), so ties take the later index
// and a NaN, once met, stays (each later NaN taking its index).
template <class T, class Compare>
void cummax_cummin_rows(const DimView& v, const T* x, T* values, int64_t* indices) {
  const Compare replaces{};
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      const int64_t base = o * v.size * v.inner + i;
      if (v.size == 0) continue;
      T best = x[base];
      int64_t at = 0;
      for (int64_t k = 0; k < v.size; ++k) {
        const T e = x[base + k * v.inner];
        if (std::isnan(e) || (!std::isnan(best) && replaces(e, best))) {
          best = e;
          at = k;
        }
        values[base + k * v.inner] = best;
        indices[base + k * v.inner] = at;
      }
    }
  }
}

void cummax_cummin_backward(Tape& tape, const Node& node) {
  // Y_k = X_{idx_k}  =>  dX[.., idx_k, ..] += dY[.., k, ..] (torch's cummaxmin_backward, a
  // scatter_add into zeros: an element that stays the extreme over several k gathers them all)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const auto& s = node.state_as<CummaxCumminState>();
    const DimView& v = s.view;
    const T* dy = node.grad_as<const T>();
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t k = 0; k < v.size; ++k) {
        for (int64_t i = 0; i < v.inner; ++i) {
          const int64_t at = (o * v.size + k) * v.inner + i;
          dx[(o * v.size + s.indices[at]) * v.inner + i] += dy[at];
        }
      }
    }
  });
}

void cummax_cummin_grad_graph(GradGraph& g) {
  // Y_k = X_{idx_k}  =>  dX += scatter_add(zeros(X), dim, idx, dY); the indices a constant
  const auto& s = g.state<CummaxCumminState>();
  const int dim = s.dim;
  const Shape shape = g.input(0).shape();
  if (shape.rank() == 0) {
    g.add(0, g.grad());
    return;
  }
  const Ids indices(shape, std::vector<int64_t>(s.indices, s.indices + shape.numel()));
  g.add(0, scatter_add(zeros(shape, g.grad().dtype()), dim, indices, g.grad()));
}

std::string cummax_cummin_arguments(const Tape& t, const Node& n) {
  return dim_text(n.state_as<CummaxCumminState>().dim, t.input(n, 0).shape.rank());
}

int64_t cummax_cummin_state_bytes(const Tape&, const Node& n) {
  return static_cast<int64_t>(n.shape.numel() * sizeof(int64_t));
}

const OpDef kCummax{.name = "cummax",
                    .backward = cummax_cummin_backward,
                    .arguments = cummax_cummin_arguments,
                    .saves = saves::kNothing,
                    .state_bytes = cummax_cummin_state_bytes,
                    .grad_graph = cummax_cummin_grad_graph};
TAPEGRAD_REGISTER_OP(kCummax);

const OpDef kCummin{.name = "cummin",
                    .backward = cummax_cummin_backward,
                    .arguments = cummax_cummin_arguments,
                    .saves = saves::kNothing,
                    .state_bytes = cummax_cummin_state_bytes,
                    .grad_graph = cummax_cummin_grad_graph};
TAPEGRAD_REGISTER_OP(kCummin);

ValuesIndices cummax_cummin(const char* op, const OpDef& def, bool largest, const Tensor& x,
                            int dim) {
  const DimReduction r = plan_dim_reduction(op, x, dim, true);
  const Shape shape = x.shape();
  const int64_t n = shape.numel();
  auto* indices = x.tape().arena().allocate_array<int64_t>(n);
  Tensor y = x.tape().record(def, shape, x.dtype(), {x}, CummaxCumminState{r.dim, r.view, indices});
  dispatch(y.dtype(), [&]<class T>() {
    if (largest) {
      cummax_cummin_rows<T, std::greater_equal<T>>(r.view, x.data<T>(), output_data<T>(y), indices);
    } else {
      cummax_cummin_rows<T, std::less_equal<T>>(r.view, x.data<T>(), output_data<T>(y), indices);
    }
  });
  return {y, Ids(shape, std::vector<int64_t>(indices, indices + n))};
}

}  // namespace

ValuesIndices cummax(const Tensor& x, int dim) {
  return cummax_cummin("cummax", kCummax, true, x, dim);
}

ValuesIndices cummin(const Tensor& x, int dim) {
  return cummax_cummin("cummin", kCummin, false, x, dim);
}

}  // namespace tapegrad
