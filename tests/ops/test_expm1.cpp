// Tests for ops/expm1.cpp.
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"

using namespace tapegrad;

TEST_CASE(
    "expm1: matches torch's forward and backward within 16 ulps (a cancelling gradient), float32 "
    "and float64",
    "[expm1][goldens]") {
  const int64_t equal = testing::check_unary_goldens(
      "expm1", [](const Tensor& x) { return expm1(x); }, testing::kCancellingUlps,
      testing::math_goldens());
  INFO("expm1: elements equal to torch's bit for bit: " << equal);
  CHECK(equal > 0);
}

TEST_CASE("expm1: an empty tensor", "[expm1]") {
  testing::check_empty_input([](const Tensor& x) { return expm1(x); });
}

GRADCHECK_TEST_CASE("expm1", "ranks 0 to 4") {
  testing::require_unary_gradcheck(
      "expm1", [](const Tensor& x) { return expm1(x); }, -2.0, 2.0);
}
