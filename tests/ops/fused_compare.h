// Test helpers for the fused ops: run a function forward and backward on fresh leaves and
// return its values and input gradients, so a fused op can be compared with the composed ops.
#pragma once

#include <functional>
#include <span>
#include <utility>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/gradcheck.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/graph/threads.h>
#include "tests/compare.h"  // max_abs_difference

namespace tapegrad::testing {

struct ForwardBackward {
  std::vector<double> value;
  std::vector<std::vector<double>> grads;  // one per input
};

// Records f on a fresh tape over leaves holding `inputs` (dtype `dtype`, requiring grad), then
// backpropagates the fixed upstream gradient `upstream` (sized to f's output).
inline ForwardBackward run_forward_backward(const std::function<Tensor(std::span<const Tensor>)>& f,
                                            const std::vector<GradcheckInput>& inputs, DType dtype,
                                            const std::vector<double>& upstream) {
  Tape tape;
  TapeScope scope(tape);
  std::vector<Tensor> leaves;
  for (const GradcheckInput& in : inputs) {
    leaves.push_back(from_values(in.shape, in.values, dtype, /*requires_grad=*/true));
  }
  Tensor y = f(leaves);
  ForwardBackward out;
  out.value = y.values();
  tape.backward(y, upstream);
  for (const Tensor& leaf : leaves) out.grads.push_back(leaf.grad_values());
  return out;
}

// Runs `run` (a ForwardBackward) at 1 thread and at 2 and returns both, the thread count set
// back to 1, for a test to require they are the same bits.
template <class Run>
std::pair<ForwardBackward, ForwardBackward> at_1_and_2_threads(const Run& run) {
  set_num_threads(1);
  ForwardBackward one = run();
  set_num_threads(2);
  ForwardBackward two = run();
  set_num_threads(1);
  return {std::move(one), std::move(two)};
}

}  // namespace tapegrad::testing
