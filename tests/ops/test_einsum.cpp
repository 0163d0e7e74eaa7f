// Tests for ops/einsum.cpp: torch goldens from tests/goldens/einsum/make_einsum_goldens.py
// (contractions, traces, outer products, sums, ellipsis and label broadcasting, implicit output,
// 0-dim and zero-size operands, NaN/±inf), its errors, and gradchecks through the composed ops.
#include <cmath>
#include <limits>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/goldens.h"
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

namespace test_einsum {

// Within rounding of torch's: the products sum in another order than torch's GEMM calls.
void require_near(const std::vector<double>& got, const testing::GoldenTensor& want, DType dtype,
                  const std::string& what) {
  INFO(what);
  REQUIRE(got.size() == want.values.size());
  const double tol = dtype == DType::Float32 ? 1e-5 : 1e-12;
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": " << got[i] << " vs torch " << want.values[i]);
    if (std::isnan(want.values[i]) || std::isinf(want.values[i])) {
      CHECK((got[i] == want.values[i] || (std::isnan(got[i]) && std::isnan(want.values[i]))));
    } else {
      CHECK(std::abs(got[i] - want.values[i]) <= tol * (1.0 + std::abs(want.values[i])));
    }
  }
}

void check(const std::string& case_name, const std::string& equation, int operands) {
  static const testing::GoldenFile golden("einsum", "einsum.txt");
  for (const auto& [tag, dtype] : testing::golden_dtypes()) {
    const std::string name = case_name + "." + tag;
    INFO(name << ": " << equation);
    Tape tape;
    TapeScope scope(tape);
    std::vector<Tensor> xs;
    for (int k = 0; k < operands; ++k) {
      const testing::GoldenTensor& gx = golden[name + ".x" + std::to_string(k)];
      xs.push_back(from_values(gx.shape, gx.values, dtype, true));
    }
    const Tensor y = einsum(equation, xs);
    const testing::GoldenTensor& want_y = golden[name + ".y"];
    REQUIRE(y.shape() == want_y.shape);
    require_near(y.values(), want_y, dtype, name + ".y");
    const testing::GoldenTensor& dy = golden[name + ".dy"];
    const std::vector<Tensor> dxs =
        grad(std::vector<Tensor>{y}, xs,
             std::vector<Tensor>{from_values(dy.shape, dy.values, dtype)}, {.allow_unused = true});
    for (int k = 0; k < operands; ++k) {
      const testing::GoldenTensor& want = golden[name + ".dx" + std::to_string(k)];
      std::vector<double> dx = dxs[static_cast<size_t>(k)].defined()
                                   ? dxs[static_cast<size_t>(k)].values()
                                   : std::vector<double>(want.values.size(), 0.0);
      require_near(dx, want, dtype, name + ".dx" + std::to_string(k));
    }
  }
}

}  // namespace test_einsum

TEST_CASE("einsum: torch goldens (contractions, traces, outer, sums, ellipsis, implicit output)",
          "[einsum][goldens]") {
  using test_einsum::check;
  check("matmul", "ij,jk->ik", 2);
  check("batched", "bij,bjk->bik", 2);
  check("trace", "ii", 1);
  check("diag", "ii->i", 1);
  check("outer", "i,j->ij", 2);
  check("sum_all", "ij->", 1);
  check("transpose", "ij->ji", 1);
  check("ellipsis", "...ij,...jk", 2);
  check("broadcast_label", "bi,bi->b", 2);
  check("repeated_sum", "iij->ji", 1);
  check("implicit_case", "Ab,ba", 2);
  check("chain", "ij,jk,kl->il", 3);
  check("attention", "bhqd,bhkd->bhqk", 2);
  check("hadamard", "ij,ij->ij", 2);
  check("scalar", ",i->i", 2);
  check("bilinear", "bn,anm,bm->ba", 3);
  check("zero_size", "ij,jk->ik", 2);
  check("zero_contraction", "ij,jk->ik", 2);
  check("nan_inf", "i,i->i", 2);
}

TEST_CASE("einsum: spaces, errors naming the equation and the operand", "[einsum]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor a = ones({2, 3}), b = ones({3, 4});
  CHECK(einsum(" ij , jk -> ik ", {a, b}).shape() == Shape{2, 4});
  CHECK_THROWS_WITH(einsum("ij,jk->ik", {a}),
                    "einsum: \"ij,jk->ik\": 2 operand subscripts for 1 operands");
  CHECK_THROWS_WITH(einsum("ijk->i", {a}),
                    "einsum: \"ijk->i\": operand 0 [2, 3] has rank 2 for 3 subscripts");
  CHECK_THROWS_WITH(einsum("ij,jk", {a, a}),
                    "einsum: \"ij,jk\": subscript j has size 2 for operand 1 [2, 3], which does "
                    "not broadcast with the size 3 seen before");
  CHECK_THROWS_WITH(einsum("ii->i", {a}),
                    "einsum: \"ii->i\": subscript i is repeated for operand 0 [2, 3] but the "
                    "sizes don't match, 2 != 3");
  CHECK_THROWS_WITH(einsum("ij->k", {a}),
                    "einsum: \"ij->k\": output subscript k does not appear in any operand");
  CHECK_THROWS_WITH(einsum("ij->ii", {a}),
                    "einsum: \"ij->ii\": output subscript i appears more than once");
  CHECK_THROWS_WITH(einsum("i1", {a}), Catch::StartsWith("einsum: \"i1\": invalid subscript '1'"));
  CHECK_THROWS_WITH(einsum("..i.", {a}),
                    "einsum: \"..i.\": an ellipsis is three dots, at most one per operand");
}

TEST_CASE("einsum: second derivatives through the composed ops", "[einsum][grad]") {
  const auto f = [](std::span<const Tensor> in) {
    return einsum("ij,jk,kj->i", {in[0], in[1] * in[1], in[0]});
  };
  auto report = gradgradcheck("einsum", f, {random_input({2, 3}, 46), random_input({3, 2}, 47)});
  INFO(report.message);
  CHECK(report.passed);
}

TEST_CASE("einsum: gradchecks of traces, outer products, ellipsis and broadcasting", "[einsum]") {
  const auto check = [](const std::string& equation, std::vector<GradcheckInput> inputs) {
    INFO(equation);
    auto report = gradcheck(
        "einsum", [&](std::span<const Tensor> in) { return einsum(equation, in); }, inputs);
    INFO(report.message);
    CHECK(report.passed);
  };
  check("ii", {random_input({3, 3}, 48)});
  check("i,j->ij", {random_input({2}, 49), random_input({3}, 50)});
  check("...ij,...jk", {random_input({2, 1, 2, 3}, 51), random_input({3, 3, 2}, 52)});
  check("bi,bi->b", {random_input({2, 3}, 53), random_input({1, 3}, 54)});
  check("iij->ji", {random_input({2, 2, 3}, 55)});
}
