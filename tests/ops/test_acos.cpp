// Tests for ops/acos.cpp.
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"

using namespace tapegrad;

TEST_CASE(
    "acos: matches torch's forward and backward within the C library's ulps, float32 and float64",
    "[acos][goldens]") {
  const int64_t equal = testing::check_unary_goldens(
      "acos", [](const Tensor& x) { return acos(x); }, testing::kLibmUlps, testing::math_goldens());
  INFO("acos: elements equal to torch's bit for bit: " << equal);
  CHECK(equal > 0);
}

TEST_CASE("acos: an empty tensor", "[acos]") {
  testing::check_empty_input([](const Tensor& x) { return acos(x); });
}

GRADCHECK_TEST_CASE("acos", "ranks 0 to 4") {
  testing::require_unary_gradcheck(
      "acos", [](const Tensor& x) { return acos(x); }, -0.9, 0.9);
}
