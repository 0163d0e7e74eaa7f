// Tests for ops/sinh.cpp.
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"

using namespace tapegrad;

TEST_CASE(
    "sinh: matches torch's forward and backward within the C library's ulps, float32 and float64",
    "[sinh][goldens]") {
  const int64_t equal = testing::check_unary_goldens(
      "sinh", [](const Tensor& x) { return sinh(x); }, testing::kLibmUlps, testing::math_goldens());
  INFO("sinh: elements equal to torch's bit for bit: " << equal);
  CHECK(equal > 0);
}

TEST_CASE("sinh: an empty tensor", "[sinh]") {
  testing::check_empty_input([](const Tensor& x) { return sinh(x); });
}

GRADCHECK_TEST_CASE("sinh", "ranks 0 to 4") {
  testing::require_unary_gradcheck(
      "sinh", [](const Tensor& x) { return sinh(x); }, -2.0, 2.0);
}
