// Tests for ops/logcumsumexp.cpp: torch goldens from tests/goldens/cumulative/
// make_cumulative_goldens.py (±inf, NaN, 0-dim, empty) and the gradcheck.
#include <cmath>
#include <limits>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/goldens.h"
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

namespace test_logcumsumexp {

// The forward is torch's loop in double (bit for bit). The gradient is torch's formula computed
// in double and rounded once, where torch rounds each step in x's dtype and calls SLEEF's log and
// exp: within a few ulps, more where dY's signs mix and the two exponentials cancel.
void check(const std::string& case_name, int dim, double dx_ulps_f32, double dx_ulps_f64) {
  static const testing::GoldenFile golden("cumulative", "cumulative.txt");
  for (const auto& [tag, dtype] : testing::golden_dtypes()) {
    const std::string name = case_name + "." + tag;
    INFO(name);
    Tape tape;
    TapeScope scope(tape);
    const testing::GoldenTensor& gx = golden[name + ".x"];
    const Tensor x = from_values(gx.shape, gx.values, dtype, true);
    const Tensor y = logcumsumexp(x, dim);
    const testing::GoldenTensor& want_y = golden[name + ".y"];
    REQUIRE(y.shape() == want_y.shape);
    testing::require_golden(y.values(), want_y, dtype, 0, true, name + ".y");
    const testing::GoldenTensor& dy = golden[name + ".dy"];
    sum(y * from_values(dy.shape, dy.values, dtype)).backward();
    std::vector<double> dx = x.grad_values();
    if (dx.empty()) dx.assign(gx.values.size(), 0.0);
    testing::require_golden(dx, golden[name + ".dx"], dtype,
                            dtype == DType::Float32 ? dx_ulps_f32 : dx_ulps_f64, false,
                            name + ".dx");
  }
}

}  // namespace test_logcumsumexp

TEST_CASE("logcumsumexp: torch goldens (±inf, NaN, ties, a long row, 0-dim, empty)",
          "[logcumsumexp][goldens]") {
  test_logcumsumexp::check("logcumsumexp", 1, 8, 8);
  test_logcumsumexp::check("logcumsumexp_ties", 0, 8, 8);
  test_logcumsumexp::check("logcumsumexp_long", -1, 8, 8);
  test_logcumsumexp::check("logcumsumexp_mixed_dy", 1, 64, 64);
  test_logcumsumexp::check("logcumsumexp_inf", 1, 8, 8);
  test_logcumsumexp::check("logcumsumexp_0d", 0, 0, 0);
  test_logcumsumexp::check("logcumsumexp_empty", 1, 0, 0);
}

TEST_CASE("logcumsumexp: running log-sum-exp without overflow, errors name the op",
          "[logcumsumexp]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor y = logcumsumexp(tensor({1000.0, 1000.0, -1000.0}, DType::Float64), 0);
  CHECK(y.values()[0] == 1000.0);
  CHECK(std::abs(y.values()[1] - (1000.0 + std::log(2.0))) < 1e-12);
  CHECK_THROWS_WITH(logcumsumexp(zeros({2}), 1),
                    "logcumsumexp: x [2]: dim 1 is out of range for rank 1 (expected -1..0)");
}

GRADCHECK_TEST_CASE("logcumsumexp", "ranks 0-3, each dim") {
  for (const auto& [shape, dim] : std::vector<std::pair<Shape, int>>{
           {Shape{}, 0}, {Shape{5}, 0}, {Shape{3, 4}, 1}, {Shape{3, 4}, 0}, {Shape{2, 3, 2}, -2}}) {
    auto report =
        gradcheck("logcumsumexp",
                  [dim = dim](std::span<const Tensor> in) { return logcumsumexp(in[0], dim); },
                  {random_input(shape, 43, -2.0, 2.0)});
    testing::require_gradcheck(report, "logcumsumexp");
  }
}
