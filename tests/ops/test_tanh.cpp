// Tests for ops/tanh.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/activation_cases.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("tanh: saturates without NaN in float32", "[tanh]") {
  Tape tape;
  TapeScope scope(tape);
  const std::vector<double> v = tanh(tensor({100.0, -100.0, 0.0})).values();
  CHECK(v[0] == 1.0);
  CHECK(v[1] == -1.0);
  CHECK(v[2] == 0.0);
}

TEST_CASE("tanh: matches torch's forward and backward, float32 and float64", "[tanh][goldens]") {
  const int64_t equal = testing::check_activation_goldens(
      "tanh", [](const Tensor& x) { return tanh(x); }, 4);
  // Within 4 ulps; torch vectorises with SLEEF, so a few elements differ in the last bit
  // (measured: tanh 227, sigmoid 236, silu 234 of 240 equal).
  CHECK(equal > 0);
}

GRADCHECK_TEST_CASE("tanh", "ranks 0 to 4") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report = gradcheck("tanh", [](std::span<const Tensor> in) { return tanh(in[0]); },
                            {random_input(shape, 3, -2.0, 2.0)});
    testing::require_gradcheck(report, "tanh");
  }
}
