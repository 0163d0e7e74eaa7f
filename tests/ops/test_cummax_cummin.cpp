// Tests for ops/cummax_cummin.cpp: torch goldens from tests/goldens/cumulative/
// make_cumulative_goldens.py, bit for bit (ties, NaN, ±inf, 0-dim, empty), and the gradchecks.
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/goldens.h"
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

namespace test_cummax_cummin {

const testing::GoldenFile& goldens() {
  static const testing::GoldenFile golden("cumulative", "cumulative.txt");
  return golden;
}

// torch's values, indices and gradient for its dy, both dtypes.
void check(const std::string& case_name, bool largest, int dim) {
  const testing::GoldenFile& golden = goldens();
  for (const auto& [tag, dtype] : testing::golden_dtypes()) {
    const std::string name = case_name + "." + tag;
    INFO(name);
    Tape tape;
    TapeScope scope(tape);
    const testing::GoldenTensor& gx = golden[name + ".x"];
    const Tensor x = from_values(gx.shape, gx.values, dtype, true);
    const ValuesIndices r = largest ? cummax(x, dim) : cummin(x, dim);
    const testing::GoldenTensor& want_y = golden[name + ".y"];
    REQUIRE(r.values.shape() == want_y.shape);
    testing::require_golden(r.values.values(), want_y, dtype, 0, true, name + ".y");
    const testing::GoldenTensor& want_i = golden[name + ".indices"];
    CHECK(r.indices.shape() == want_i.shape);
    CHECK(std::vector<int64_t>(r.indices.values().begin(), r.indices.values().end()) ==
          want_i.ints());
    const testing::GoldenTensor& dy = golden[name + ".dy"];
    sum(r.values * from_values(dy.shape, dy.values, dtype)).backward();
    std::vector<double> dx = x.grad_values();
    if (dx.empty()) dx.assign(gx.values.size(), 0.0);
    testing::require_golden(dx, golden[name + ".dx"], dtype, 0, false, name + ".dx");
  }
}

}  // namespace test_cummax_cummin

TEST_CASE("cummax and cummin: torch goldens (ties, NaN, ±inf, dims, 0-dim, empty)",
          "[cummax][cummin][goldens]") {
  for (const bool largest : {true, false}) {
    const std::string op = largest ? "cummax" : "cummin";
    test_cummax_cummin::check(op, largest, 1);
    test_cummax_cummin::check(op + "_nan", largest, 1);
    test_cummax_cummin::check(op + "_dim0", largest, 0);
    test_cummax_cummin::check(op + "_neg_dim", largest, -2);
    test_cummax_cummin::check(op + "_0d", largest, 0);
    test_cummax_cummin::check(op + "_empty", largest, 0);
    test_cummax_cummin::check(op + "_empty_dim", largest, 1);
  }
}

TEST_CASE("cummax and cummin: ties take the later index, a NaN stays, errors name the op",
          "[cummax][cummin]") {
  Tape tape;
  TapeScope scope(tape);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = requires_grad(tensor({2.0, 1.0, 2.0, nan, 5.0}, DType::Float64));
  const ValuesIndices m = cummax(x, 0);
  CHECK(m.indices.values()[2] == 2);  // the tie with x[0] moves the index
  CHECK(std::vector<int64_t>(m.indices.values().begin(), m.indices.values().end()) ==
        std::vector<int64_t>{0, 0, 2, 3, 3});
  CHECK(std::isnan(m.values.values()[4]));
  tape.backward(m.values, std::vector<double>{1, 10, 100, 1000, 10000});
  CHECK(x.grad_values() == std::vector<double>{11, 0, 100, 11000, 0});
  const ValuesIndices n = cummin(tensor({3.0, 1.0, 1.0, 4.0}), -1);
  CHECK(std::vector<int64_t>(n.indices.values().begin(), n.indices.values().end()) ==
        std::vector<int64_t>{0, 1, 2, 2});
  CHECK_THROWS_WITH(cummax(zeros({2, 3}), 2),
                    "cummax: x [2, 3]: dim 2 is out of range for rank 2 (expected -2..1)");
  CHECK_THROWS_WITH(cummin(scalar(1.0), 1),
                    "cummin: x []: dim 1 is out of range for rank 0 (expected -1..0)");
}

GRADCHECK_TEST_CASE("cummax", "ranks 0-3, each dim, distinct values") {
  for (const auto& [shape, dim] : std::vector<std::pair<Shape, int>>{
           {Shape{}, 0}, {Shape{5}, 0}, {Shape{3, 4}, 1}, {Shape{3, 4}, -2}, {Shape{2, 3, 2}, 1}}) {
    auto report = gradcheck(
        "cummax", [dim = dim](std::span<const Tensor> in) { return cummax(in[0], dim).values; },
        {random_input(shape, 41)});
    testing::require_gradcheck(report, "cummax");
  }
}

GRADCHECK_TEST_CASE("cummin", "ranks 0-3, each dim, distinct values") {
  for (const auto& [shape, dim] : std::vector<std::pair<Shape, int>>{
           {Shape{}, -1}, {Shape{6}, 0}, {Shape{4, 3}, 0}, {Shape{2, 3, 2}, -1}}) {
    auto report = gradcheck(
        "cummin", [dim = dim](std::span<const Tensor> in) { return cummin(in[0], dim).values; },
        {random_input(shape, 42)});
    testing::require_gradcheck(report, "cummin");
  }
}
