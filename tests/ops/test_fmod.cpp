// Tests for ops/fmod.cpp (fmod and remainder).
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"

using namespace tapegrad;

TEST_CASE("fmod, remainder: the sign of a against the sign of b, and a zero divisor",
          "[fmod][remainder]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor a = tensor({5.5, -5.5, 5.5, -5.5, 1.0}, DType::Float64);
  const Tensor b = tensor({2.0, 2.0, -2.0, -2.0, 0.0}, DType::Float64);
  const std::vector<double> f = fmod(a, b).values(), r = remainder(a, b).values();
  CHECK(std::vector<double>(f.begin(), f.end() - 1) == std::vector<double>{1.5, -1.5, 1.5, -1.5});
  CHECK(std::vector<double>(r.begin(), r.end() - 1) == std::vector<double>{1.5, 0.5, -0.5, -1.5});
  CHECK(std::isnan(f.back()));
  CHECK(std::isnan(r.back()));
}

TEST_CASE("fmod, remainder: match torch bit for bit, broadcasting, nan and ±inf",
          "[fmod][remainder][goldens]") {
  for (const char* name : {"fmod", "fmod_signs"}) {
    testing::check_binary_goldens(
        name, [](const Tensor& a, const Tensor& b) { return fmod(a, b); }, 0,
        testing::math_goldens());
  }
  for (const char* name : {"remainder", "remainder_signs"}) {
    testing::check_binary_goldens(
        name, [](const Tensor& a, const Tensor& b) { return remainder(a, b); }, 0,
        testing::math_goldens());
  }
}

GRADCHECK_TEST_CASE("fmod", "broadcasting both ways, away from the jumps") {
  // a in [0.2, 0.8), b in [1, 2): the quotient stays in (0, 1), away from its jumps.
  testing::require_binary_gradcheck(
      "fmod", [](const Tensor& a, const Tensor& b) { return fmod(a, b); }, 0.2, 0.8, 1.0, 2.0);
}

GRADCHECK_TEST_CASE("remainder", "broadcasting both ways, away from the jumps") {
  testing::require_binary_gradcheck(
      "remainder", [](const Tensor& a, const Tensor& b) { return remainder(a, b); }, -0.8, -0.2,
      1.0, 2.0);
}
