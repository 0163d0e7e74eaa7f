// Gradient checking: float64 central differences against the tape's backward, PyTorch's defaults.
//
// Use it from your own tests:
//   auto report = tapegrad::gradcheck("attention", [](std::span<const Tensor> in) {
//     return softmax(matmul(in[0], in[1]), -1);
//   }, {random_input({2, 3}), random_input({3, 4})});
//   REQUIRE(report.passed);  // report.message names the worst element on failure
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/tape.h>

namespace tapegrad {

struct GradcheckOptions {
  double eps = 1e-6;  // torch.autograd.gradcheck's defaults
  double atol = 1e-5;
  double rtol = 1e-3;
  // Compare random projections vᵀ·J·u instead of the whole Jacobian: one backward and two
  // forwards per check, for inputs too large for the full Jacobian.
  bool fast_mode = false;
  uint64_t seed = 0;  // for fast mode's u and v
};

struct GradcheckInput {
  Shape shape;
  std::vector<double> values;
  bool requires_grad = true;
};

// An input of `shape` with values uniform in [lo, hi) from a fixed-seed stream.
GradcheckInput random_input(const Shape& shape, uint64_t seed = 1, double lo = -1.0,
                            double hi = 1.0);

struct GradcheckReport {
  bool passed = false;
  std::string function;
  // The single worst element (largest error relative to its tolerance):
  int input = -1;               // which input (or parameter)
  int64_t element = -1;         // its row-major index in that input
  int64_t output_element = -1;  // which output element (-1 in fast mode: a projection)
  double numeric = 0.0;
  double analytic = 0.0;
  double error = 0.0;      // |analytic - numeric|
  double tolerance = 0.0;  // atol + rtol * |numeric|
  int64_t checked = 0;     // number of Jacobian entries (or projections) compared
  std::string message;     // one line, for REQUIRE/INFO
  // Names of the ops the function recorded (every one of them was checked).
  std::vector<std::string> ops;
};

using GradcheckFunction = std::function<Tensor(std::span<const Tensor>)>;

// Checks f's backward against central differences w.r.t. every input that requires grad.
// Inputs are float64 leaves on a fresh tape; f must return a float64 tensor of any shape and be
// deterministic (reseed any generator inside f).
GradcheckReport gradcheck(const std::string& name, const GradcheckFunction& f,
                          const std::vector<GradcheckInput>& inputs,
                          const GradcheckOptions& options = {});

// The same w.r.t. float64 Parameters that f reads (e.g. a module's W_query ... out_proj):
// values are perturbed in place and restored exactly afterwards.
GradcheckReport gradcheck_parameters(const std::string& name, const std::function<Tensor()>& f,
                                     const std::vector<Parameter>& parameters,
                                     const GradcheckOptions& options = {});

}  // namespace tapegrad
