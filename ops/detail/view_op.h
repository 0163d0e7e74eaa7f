// What the reshaping ops (squeeze, unsqueeze, flatten, unflatten) share: each keeps x's elements in
// order under a new shape, so they differ only in the shape rule and the name they record.
#pragma once

#include <cstdint>
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
