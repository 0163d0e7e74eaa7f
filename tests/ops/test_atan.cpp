// Tests for ops/atan.cpp.
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"

using namespace tapegrad;

TEST_CASE(
    "atan: matches torch's forward and backward within the C library's ulps, float32 and float64",
    "[atan][goldens]") {
  const int64_t equal = testing::check_unary_goldens(
      "atan", [](const Tensor& x) { return atan(x); }, testing::kLibmUlps, testing::math_goldens());
  INFO("atan: elements equal to torch's bit for bit: " << equal);
  CHECK(equal > 0);
}

TEST_CASE("atan: an empty tensor", "[atan]") {
  testing::check_empty_input([](const Tensor& x) { return atan(x); });
}

GRADCHECK_TEST_CASE("atan", "ranks 0 to 4") {
  testing::require_unary_gradcheck(
      "atan", [](const Tensor& x) { return atan(x); }, -2.0, 2.0);
}
