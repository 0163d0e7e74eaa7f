// Tests for ops/acosh.cpp.
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"

using namespace tapegrad;

TEST_CASE(
    "acosh: matches torch's forward and backward within the C library's ulps, float32 and float64",
    "[acosh][goldens]") {
  const int64_t equal = testing::check_unary_goldens(
      "acosh", [](const Tensor& x) { return acosh(x); }, testing::kLibmUlps,
      testing::math_goldens());
  INFO("acosh: elements equal to torch's bit for bit: " << equal);
  CHECK(equal > 0);
}

TEST_CASE("acosh: an empty tensor", "[acosh]") {
  testing::check_empty_input([](const Tensor& x) { return acosh(x); });
}

GRADCHECK_TEST_CASE("acosh", "ranks 0 to 4") {
  testing::require_unary_gradcheck(
      "acosh", [](const Tensor& x) { return acosh(x); }, 1.2, 3.0);
}
