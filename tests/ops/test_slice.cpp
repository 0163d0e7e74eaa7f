// Tests for ops/slice.cpp: torch's x[start:end:step] (goldens from tests/goldens/slicing/
// make_slicing_goldens.py: negative and clamped ends, empty results, a zero-size dim), its errors
// and the gradcheck.
#include <limits>
#include <optional>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/goldens.h"
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

namespace test_slice {

using Opt = std::optional<int64_t>;

void check(const std::string& case_name, int dim, Opt start, Opt end, int64_t step) {
  static const testing::GoldenFile golden("slicing", "slicing.txt");
  for (const auto& [tag, dtype] : testing::golden_dtypes()) {
    const std::string name = case_name + "." + tag;
    INFO(name);
    Tape tape;
    TapeScope scope(tape);
    const testing::GoldenTensor& gx = golden[name + ".x"];
    const Tensor x = from_values(gx.shape, gx.values, dtype, true);
    const Tensor y = slice(x, dim, start, end, step);
    const testing::GoldenTensor& want_y = golden[name + ".y"];
    REQUIRE(y.shape() == want_y.shape);
    testing::require_golden(y.values(), want_y, dtype, 0, true, name + ".y");
    const testing::GoldenTensor& dy = golden[name + ".dy"];
    sum(y * from_values(dy.shape, dy.values, dtype)).backward();
    std::vector<double> dx = x.grad_values();
    if (dx.empty()) dx.assign(gx.values.size(), 0.0);
    testing::require_golden(dx, golden[name + ".dx"], dtype, 0, false, name + ".dx");
  }
}

}  // namespace test_slice

TEST_CASE("slice: torch goldens (steps, negative and clamped ends, empty, zero-size)",
          "[slice][goldens]") {
  using test_slice::check;
  check("slice_step2", 1, 1, 6, 2);
  check("slice_neg_start", 0, -3, std::nullopt, 1);
  check("slice_neg_end", -1, 0, -2, 1);
  check("slice_clamped", 1, -100, 100, 3);
  check("slice_past_end", 1, 7, 9, 1);
  check("slice_end_before_start", 1, 3, 1, 1);
  check("slice_big_step", 1, 1, std::nullopt, 10);
  check("slice_rank3_last", -1, 2, 8, 3);
  check("slice_zero_size", 2, 0, 3, 2);
}

TEST_CASE("slice: defaults, huge steps and ends, errors name the op", "[slice]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = tensor({0.0, 1.0, 2.0, 3.0, 4.0, 5.0});
  CHECK(slice(x).values() == x.values());
  CHECK(slice(x, 0, std::nullopt, std::nullopt, 4).values() == std::vector<double>{0, 4});
  const int64_t big = std::numeric_limits<int64_t>::max();
  CHECK(slice(x, 0, 1, big, big).values() == std::vector<double>{1});
  CHECK(slice(x, 0, -big, -big).shape() == Shape{0});
  CHECK_THROWS_WITH(slice(x, 0, 0, 3, 0), "slice: x [6]: step must be positive, got 0");
  CHECK_THROWS_WITH(slice(x, 0, 0, 3, -1), "slice: x [6]: step must be positive, got -1");
  CHECK_THROWS_WITH(slice(scalar(1.0), 0), "slice: x []: cannot slice a 0-dim tensor");
  CHECK_THROWS_WITH(slice(x, 1), Catch::StartsWith("slice: x [6]: dim 1 is out of range"));
}

GRADCHECK_TEST_CASE("slice", "steps, negative ends, each dim") {
  const auto check = [](const Shape& shape, int dim, int64_t start, int64_t end, int64_t step) {
    auto report = gradcheck(
        "slice", [=](std::span<const Tensor> in) { return slice(in[0], dim, start, end, step); },
        {random_input(shape, 44)});
    testing::require_gradcheck(report, "slice");
  };
  check({7}, 0, 1, 7, 3);
  check({3, 5}, 1, -4, -1, 2);
  check({4, 2, 3}, 0, 0, 4, 1);
  check({2, 3, 4}, -1, 1, 100, 2);
}
