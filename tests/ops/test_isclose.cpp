// Tests for ops/isclose.cpp: torch.isclose's tolerances, infinities and NaN.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise3_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("isclose: torch goldens (default and own tolerances, equal_nan, exact, broadcast)",
          "[isclose][goldens]") {
  const auto with = [](double rtol, double atol, bool equal_nan) {
    return [=](const std::vector<Tensor>& x) { return isclose(x[0], x[1], rtol, atol, equal_nan); };
  };
  testing::check_elementwise3("isclose", {"a", "b"}, with(1e-5, 1e-8, false), false);
  testing::check_elementwise3("isclose_equal_nan", {"a", "b"}, with(1e-5, 1e-8, true), false);
  testing::check_elementwise3("isclose_tols", {"a", "b"}, with(1e-3, 1e-4, false), false);
  testing::check_elementwise3("isclose_exact", {"a", "b"}, with(0.0, 0.0, false), false);
  testing::check_elementwise3("isclose_broadcast", {"a", "b"}, with(0.1, 0.05, false), false);
}

TEST_CASE("isclose: negative tolerances, shapes and dtypes", "[isclose][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor a = zeros({2});
  CHECK_THROWS_WITH(
      isclose(a, a, -1.0),
      "isclose: a [2] and b [2]: rtol must be greater than or equal to zero, but got -1");
  CHECK_THROWS_WITH(isclose(a, a, 1e-5, -1e-8), Catch::EndsWith("atol must be greater than or "
                                                                "equal to zero, but got -1e-08"));
  CHECK_THROWS_WITH(isclose(a, zeros({3})), Catch::StartsWith("isclose: a [2] and b [3]: cannot"));
  CHECK_THROWS_WITH(isclose(a, zeros({2}, DType::Float64)), Catch::Contains("float64"));
}

GRADCHECK_TEST_CASE("isclose", "no gradient through it") {
  auto report = gradcheck(
      "isclose",
      [](std::span<const Tensor> in) { return in[0] * (isclose(in[0], in[1], 0.5, 0.1) + 1.0); },
      {random_input({2, 3}, 53), random_input({3}, 54)});
  testing::require_gradcheck(report, "isclose");
}
