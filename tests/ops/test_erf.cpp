// Tests for ops/erf.cpp.
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"

using namespace tapegrad;

TEST_CASE(
    "erf: matches torch's forward and backward within the C library's ulps, float32 and float64",
    "[erf][goldens]") {
  const int64_t equal = testing::check_unary_goldens(
      "erf", [](const Tensor& x) { return erf(x); }, testing::kLibmUlps, testing::math_goldens());
  INFO("erf: elements equal to torch's bit for bit: " << equal);
  CHECK(equal > 0);
}

TEST_CASE("erf: an empty tensor", "[erf]") {
  testing::check_empty_input([](const Tensor& x) { return erf(x); });
}

GRADCHECK_TEST_CASE("erf", "ranks 0 to 4") {
  testing::require_unary_gradcheck(
      "erf", [](const Tensor& x) { return erf(x); }, -2.0, 2.0);
}
