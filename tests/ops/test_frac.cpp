// Tests for ops/frac.cpp.
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"

using namespace tapegrad;

TEST_CASE("frac: matches torch's forward and backward bit for bit, float32 and float64",
          "[frac][goldens]") {
  const int64_t equal = testing::check_unary_goldens(
      "frac", [](const Tensor& x) { return frac(x); }, 0, testing::math_goldens());
  INFO("frac: elements equal to torch's bit for bit: " << equal);
  CHECK(equal > 0);
}

TEST_CASE("frac: an empty tensor", "[frac]") {
  testing::check_empty_input([](const Tensor& x) { return frac(x); });
}

GRADCHECK_TEST_CASE("frac", "ranks 0 to 4") {
  testing::require_unary_gradcheck(
      "frac", [](const Tensor& x) { return frac(x); }, 0.1, 0.9);
}
