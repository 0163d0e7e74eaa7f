// Tests for ops/logaddexp.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"

using namespace tapegrad;

TEST_CASE("logaddexp: no overflow, and an infinity added to itself stays", "[logaddexp]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor a = tensor({1000.0, -INFINITY, INFINITY, 0.0}, DType::Float64);
  const Tensor b = tensor({1000.0, -INFINITY, INFINITY, -INFINITY}, DType::Float64);
  const std::vector<double> got = logaddexp(a, b).values();
  CHECK(got[0] == 1000.0 + std::log1p(1.0));
  CHECK(got[1] == -INFINITY);
  CHECK(got[2] == INFINITY);
  CHECK(got[3] == 0.0);
}

TEST_CASE("logaddexp: matches torch's forward and backward, broadcasting, nan and ±inf",
          "[logaddexp][goldens]") {
  for (const char* name : {"logaddexp", "logaddexp_signs"}) {
    testing::check_binary_goldens(
        name, [](const Tensor& a, const Tensor& b) { return logaddexp(a, b); }, testing::kLibmUlps,
        testing::math_goldens());
  }
}

GRADCHECK_TEST_CASE("logaddexp", "broadcasting both ways") {
  testing::require_binary_gradcheck(
      "logaddexp", [](const Tensor& a, const Tensor& b) { return logaddexp(a, b); }, -2.0, 2.0,
      -2.0, 2.0);
}
