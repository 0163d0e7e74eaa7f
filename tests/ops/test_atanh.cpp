// Tests for ops/atanh.cpp.
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"

using namespace tapegrad;

TEST_CASE(
    "atanh: matches torch's forward and backward within 16 ulps (a cancelling gradient), float32 "
    "and float64",
    "[atanh][goldens]") {
  const int64_t equal = testing::check_unary_goldens(
      "atanh", [](const Tensor& x) { return atanh(x); }, testing::kCancellingUlps,
      testing::math_goldens());
  INFO("atanh: elements equal to torch's bit for bit: " << equal);
  CHECK(equal > 0);
}

TEST_CASE("atanh: an empty tensor", "[atanh]") {
  testing::check_empty_input([](const Tensor& x) { return atanh(x); });
}

GRADCHECK_TEST_CASE("atanh", "ranks 0 to 4") {
  testing::require_unary_gradcheck(
      "atanh", [](const Tensor& x) { return atanh(x); }, -0.9, 0.9);
}
