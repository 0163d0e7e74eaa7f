// Tests for ops/asin.cpp.
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"

using namespace tapegrad;

TEST_CASE(
    "asin: matches torch's forward and backward within the C library's ulps, float32 and float64",
    "[asin][goldens]") {
  const int64_t equal = testing::check_unary_goldens(
      "asin", [](const Tensor& x) { return asin(x); }, testing::kLibmUlps, testing::math_goldens());
  INFO("asin: elements equal to torch's bit for bit: " << equal);
  CHECK(equal > 0);
}

TEST_CASE("asin: an empty tensor", "[asin]") {
  testing::check_empty_input([](const Tensor& x) { return asin(x); });
}

GRADCHECK_TEST_CASE("asin", "ranks 0 to 4") {
  testing::require_unary_gradcheck(
      "asin", [](const Tensor& x) { return asin(x); }, -0.9, 0.9);
}
