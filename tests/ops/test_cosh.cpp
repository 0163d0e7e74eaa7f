// Tests for ops/cosh.cpp.
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"

using namespace tapegrad;

TEST_CASE(
    "cosh: matches torch's forward and backward within the C library's ulps, float32 and float64",
    "[cosh][goldens]") {
  const int64_t equal = testing::check_unary_goldens(
      "cosh", [](const Tensor& x) { return cosh(x); }, testing::kLibmUlps, testing::math_goldens());
  INFO("cosh: elements equal to torch's bit for bit: " << equal);
  CHECK(equal > 0);
}

TEST_CASE("cosh: an empty tensor", "[cosh]") {
  testing::check_empty_input([](const Tensor& x) { return cosh(x); });
}

GRADCHECK_TEST_CASE("cosh", "ranks 0 to 4") {
  testing::require_unary_gradcheck(
      "cosh", [](const Tensor& x) { return cosh(x); }, -2.0, 2.0);
}
