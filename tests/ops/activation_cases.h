// The torch golden check shared by the activations (relu, tanh, sigmoid, silu, log_softmax, and
// leaky_relu, elu, softplus and mish): forward and backward on a file of tests/goldens/
// activations/ (activations.txt unless given), in float32 and float64.
#pragma once

#include <functional>
#include <string>

#include <tapegrad/graph/factory.h>
#include "tests/ops/hex_goldens.h"

namespace tapegrad::testing {

// `case_name` is the golden's prefix ("tanh"); `ulps` the tolerance (0: bit for bit). Returns
// the number of elements (y and dx, both dtypes) equal to torch's bit for bit.
inline int64_t check_activation_goldens(const std::string& case_name,
                                        const std::function<Tensor(const Tensor&)>& f, double ulps,
                                        const std::string& file = "activations.txt") {
  const GoldenFile golden("activations", file);
  int64_t equal = 0;
  for (const auto& [tag, dtype] : {std::pair<std::string, DType>{"f32", DType::Float32},
                                   std::pair<std::string, DType>{"f64", DType::Float64}}) {
    const std::string name = case_name + "." + tag;
    Tape tape;
    TapeScope scope(tape);
    const GoldenTensor& gx = golden[name + ".x"];
    Tensor x = from_values(gx.shape, gx.values, dtype, true);
    Tensor y = f(x);
    tape.backward(y, golden[name + ".dy"].values);
    const double tol = ulps == 0 ? 0.0 : ulps;
    equal += require_near(y.values(), golden[name + ".y"], dtype, tol, name + ".y");
    equal += require_near(x.grad_values(), golden[name + ".dx"], dtype, tol, name + ".dx");
  }
  return equal;
}

}  // namespace tapegrad::testing
