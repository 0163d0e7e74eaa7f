// Tests for ops/atan2.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"

using namespace tapegrad;

TEST_CASE("atan2: the quadrants, signed zeros and infinities as C's atan2", "[atan2]") {
  constexpr double kInf = INFINITY;  // a double: std::atan2(float, float) would round to float
  Tape tape;
  TapeScope scope(tape);
  const Tensor y = tensor({1.0, 1.0, -1.0, 0.0, -0.0, INFINITY}, DType::Float64);
  const Tensor x = tensor({1.0, -1.0, -1.0, -1.0, -1.0, INFINITY}, DType::Float64);
  const std::vector<double> got = atan2(y, x).values();
  const std::vector<double> want{std::atan2(1.0, 1.0),   std::atan2(1.0, -1.0),
                                 std::atan2(-1.0, -1.0), std::atan2(0.0, -1.0),
                                 std::atan2(-0.0, -1.0), std::atan2(kInf, kInf)};
  CHECK(got == want);
  CHECK(got[4] < 0);  // −π: the sign of a zero y picks the side
}

TEST_CASE("atan2: matches torch's forward and backward, broadcasting, nan and ±inf",
          "[atan2][goldens]") {
  for (const char* name : {"atan2", "atan2_signs"}) {
    testing::check_binary_goldens(
        name, [](const Tensor& a, const Tensor& b) { return atan2(a, b); }, testing::kLibmUlps,
        testing::math_goldens());
  }
}

TEST_CASE("atan2: operands that do not broadcast or mix dtypes", "[atan2]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(atan2(zeros({2, 3}), zeros({4})), Catch::Contains("atan2") &&
                                                          Catch::Contains("[2, 3]") &&
                                                          Catch::Contains("[4]"));
  CHECK_THROWS_WITH(atan2(zeros({2}), zeros({2}, DType::Float64)),
                    Catch::Contains("atan2") && Catch::Contains("float64"));
}

GRADCHECK_TEST_CASE("atan2", "broadcasting both ways") {
  testing::require_binary_gradcheck(
      "atan2", [](const Tensor& a, const Tensor& b) { return atan2(a, b); }, -2.0, 2.0, 0.5, 2.0);
}
