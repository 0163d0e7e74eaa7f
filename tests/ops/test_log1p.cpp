// Tests for ops/log1p.cpp.
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"

using namespace tapegrad;

TEST_CASE(
    "log1p: matches torch's forward and backward within the C library's ulps, float32 and float64",
    "[log1p][goldens]") {
  const int64_t equal = testing::check_unary_goldens(
      "log1p", [](const Tensor& x) { return log1p(x); }, testing::kLibmUlps,
      testing::math_goldens());
  INFO("log1p: elements equal to torch's bit for bit: " << equal);
  CHECK(equal > 0);
}

TEST_CASE("log1p: an empty tensor", "[log1p]") {
  testing::check_empty_input([](const Tensor& x) { return log1p(x); });
}

GRADCHECK_TEST_CASE("log1p", "ranks 0 to 4") {
  testing::require_unary_gradcheck(
      "log1p", [](const Tensor& x) { return log1p(x); }, -0.5, 2.0);
}
