// Tests for ops/asinh.cpp.
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"

using namespace tapegrad;

TEST_CASE(
    "asinh: matches torch's forward and backward within the C library's ulps, float32 and float64",
    "[asinh][goldens]") {
  const int64_t equal = testing::check_unary_goldens(
      "asinh", [](const Tensor& x) { return asinh(x); }, testing::kLibmUlps,
      testing::math_goldens());
  INFO("asinh: elements equal to torch's bit for bit: " << equal);
  CHECK(equal > 0);
}

TEST_CASE("asinh: an empty tensor", "[asinh]") {
  testing::check_empty_input([](const Tensor& x) { return asinh(x); });
}

GRADCHECK_TEST_CASE("asinh", "ranks 0 to 4") {
  testing::require_unary_gradcheck(
      "asinh", [](const Tensor& x) { return asinh(x); }, -2.0, 2.0);
}
