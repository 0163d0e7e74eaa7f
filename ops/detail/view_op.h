// What the reshaping ops (squeeze, unsqueeze, flatten, unflatten) share: each keeps x's elements in
// order under a new shape, so they differ only in the shape rule and the name they record.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include <tapegrad/graph/tape.h>

namespace tapegrad {

// Y = X read in a new shape  =>  dX += dY read in X's shape (kernel and recorded forms).
void view_backward(Tape& tape, const Node& node);
void view_grad_graph(GradGraph& g);

// Records `op` on x with `shape` (x's element count) and `state`, and copies x's elements in.
template <class State>
Tensor record_view(const OpDef& op, const Tensor& x, const Shape& shape, const State& state);

// "[2, -1, 3]".
std::string int_list_text(std::span<const int64_t> values);

// A dim given as int64 (in a list) as the int checked_dim takes: values beyond int's range become
// its bounds, still out of range for any tensor, instead of wrapping onto a valid dim.
inline int narrow_dim(int64_t dim) {
  return static_cast<int>(
      std::clamp<int64_t>(dim, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}

// An Error naming op and x unless a result of rank `rank` fits (rank <= kMaxRank).
void check_result_rank(const char* op, const Tensor& x, int rank);

}  // namespace tapegrad

#include <tapegrad/ops/detail/layout_copy.h>

namespace tapegrad {

template <class State>
Tensor record_view(const OpDef& op, const Tensor& x, const Shape& shape, const State& state) {
  Tensor y = x.tape().record(op, shape, x.dtype(), {x}, state);
  dispatch(y.dtype(), [&]<class T>() {
    layout::copy_run<false>(x.data<T>(), output_data<T>(y), shape.numel());
  });
  return y;
}

}  // namespace tapegrad
