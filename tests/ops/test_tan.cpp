// Tests for ops/tan.cpp.
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"

using namespace tapegrad;

TEST_CASE(
    "tan: matches torch's forward and backward within the C library's ulps, float32 and float64",
    "[tan][goldens]") {
  const int64_t equal = testing::check_unary_goldens(
      "tan", [](const Tensor& x) { return tan(x); }, testing::kLibmUlps, testing::math_goldens());
  INFO("tan: elements equal to torch's bit for bit: " << equal);
  CHECK(equal > 0);
}

TEST_CASE("tan: an empty tensor", "[tan]") {
  testing::check_empty_input([](const Tensor& x) { return tan(x); });
}

GRADCHECK_TEST_CASE("tan", "ranks 0 to 4") {
  testing::require_unary_gradcheck(
      "tan", [](const Tensor& x) { return tan(x); }, -1.2, 1.2);
}
