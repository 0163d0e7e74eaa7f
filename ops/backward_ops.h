// The backward ops: torch's *_backward functions, first-order formulas that are ops of their own,
// so a recorded backward (grad with create_graph) runs one kernel where a composition of
// elementwise ops would run a dozen, and is still differentiated again (each has a backward and a
// recorded backward of its own). Users rarely call them; the ops' grad_graphs do.
#pragma once

#include <cmath>
#include <numbers>
#include <string_view>

#include <tapegrad/graph/tensor.h>

namespace tapegrad {

// dY ⊙ GELU'(X) (torch.ops.aten.gelu_backward): approximate "tanh" or "none" (erf), as gelu.
// dy and x of one shape and dtype.
Tensor gelu_backward(const Tensor& dy, const Tensor& x, std::string_view approximate = "none");

// GELU'(x) = Φ(x) + x·φ(x) of the exact (erf) form, in torch's order of operations: the one
// formula gelu's kernel backward and gelu_backward's forward share.
template <class T>
T gelu_erf_derivative(T x) {
  constexpr double kAlpha = std::numbers::sqrt2 / 2.0;                            // 1/√2
  constexpr double kBeta = std::numbers::inv_sqrtpi * std::numbers::sqrt2 / 2.0;  // 1/√(2π)
  const T cdf = T(0.5) * (T(1) + std::erf(x * static_cast<T>(kAlpha)));
  const T pdf = static_cast<T>(kBeta) * std::exp(x * x * T(-0.5));
  return cdf + x * pdf;
}

}  // namespace tapegrad
