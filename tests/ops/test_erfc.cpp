// Tests for ops/erfc.cpp.
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"

using namespace tapegrad;

TEST_CASE(
    "erfc: matches torch's forward and backward within the C library's ulps, float32 and float64",
    "[erfc][goldens]") {
  const int64_t equal = testing::check_unary_goldens(
      "erfc", [](const Tensor& x) { return erfc(x); }, testing::kLibmUlps, testing::math_goldens());
  INFO("erfc: elements equal to torch's bit for bit: " << equal);
  CHECK(equal > 0);
}

TEST_CASE("erfc: an empty tensor", "[erfc]") {
  testing::check_empty_input([](const Tensor& x) { return erfc(x); });
}

GRADCHECK_TEST_CASE("erfc", "ranks 0 to 4") {
  testing::require_unary_gradcheck(
      "erfc", [](const Tensor& x) { return erfc(x); }, -2.0, 2.0);
}
