// Tests for ops/diagonal.cpp: torch.diagonal and torch.diag (both directions), against torch.
#include <limits>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise3_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

namespace test_diagonal {

const testing::GoldenFile& goldens() {
  static const testing::GoldenFile golden("padding", "padding.txt");
  return golden;
}

void check(const std::string& name, const std::function<Tensor(const Tensor&)>& f) {
  testing::check_elementwise3(
      name, {"x"}, [&](const std::vector<Tensor>& x) { return f(x[0]); }, true, 0, goldens());
}

}  // namespace test_diagonal

TEST_CASE("diagonal and diag: torch goldens (offsets, dims, empty, both diag forms)",
          "[diagonal][diag][goldens]") {
  using test_diagonal::check;
  check("diagonal", [](const Tensor& x) { return diagonal(x); });
  check("diagonal_offset", [](const Tensor& x) { return diagonal(x, 1); });
  check("diagonal_below", [](const Tensor& x) { return diagonal(x, -2); });
  check("diagonal_dims", [](const Tensor& x) { return diagonal(x, 1, 2, 0); });
  check("diagonal_negative_dims", [](const Tensor& x) { return diagonal(x, -1, -1, -2); });
  check("diagonal_empty", [](const Tensor& x) { return diagonal(x, 5); });
  check("diag_matrix", [](const Tensor& x) { return diag(x); });
  check("diag_matrix_offset", [](const Tensor& x) { return diag(x, 2); });
  check("diag_matrix_below", [](const Tensor& x) { return diag(x, -1); });
  check("diag_vector", [](const Tensor& x) { return diag(x, -1); });
}

TEST_CASE("diagonal and diag: ranks and dims", "[diagonal][diag][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(diagonal(zeros({3})), "diagonal: x [3]: needs at least 2 dims");
  CHECK_THROWS_WITH(diagonal(zeros({3, 3}), 0, 1, -1),
                    "diagonal: x [3, 3]: dim1 and dim2 are the same dim (1, -1)");
  CHECK_THROWS_WITH(diagonal(zeros({3, 3}), 0, 0, 2), Catch::Contains("out of range"));
  CHECK_THROWS_WITH(diag(zeros({2, 2, 2})), "diag: x [2, 2, 2]: needs a 1-D or 2-D tensor");
  // offsets beyond the tensor: an empty diagonal, as torch (the extremes too); diag refuses a
  // matrix it could not hold
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  CHECK(diagonal(zeros({3, 4}), kMin).shape() == Shape{0});
  CHECK(diagonal(zeros({3, 4}), std::numeric_limits<int64_t>::max()).shape() == Shape{0});
  CHECK(diagonal(zeros({3, 4}), -3).shape() == Shape{0});
  CHECK(diag(zeros({3, 4}), kMin).shape() == Shape{0});
  CHECK_THROWS_WITH(diag(zeros({2}), kMin), Catch::EndsWith("is too large"));
}

GRADCHECK_TEST_CASE("diagonal", "an offset, dims of a rank-3 tensor") {
  auto report =
      gradcheck("diagonal", [](std::span<const Tensor> in) { return diagonal(in[0], -1, 2, 0); },
                {random_input({3, 2, 4}, 62)});
  testing::require_gradcheck(report, "diagonal");
}

GRADCHECK_TEST_CASE("diag_embed", "diag of a vector, above the diagonal") {
  auto report = gradcheck("diag_embed", [](std::span<const Tensor> in) { return diag(in[0], 1); },
                          {random_input({3}, 63)});
  testing::require_gradcheck(report, "diag_embed");
}
