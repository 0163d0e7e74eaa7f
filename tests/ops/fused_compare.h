// Test helpers for the fused ops: run a function forward and backward on fresh leaves and
// return its values and input gradients, so a fused op can be compared with the composed ops.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "graph/factory.h"
#include "graph/gradcheck.h"
#include "graph/tape.h"
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

}  // namespace tapegrad::testing
