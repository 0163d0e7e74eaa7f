// Tests for ops/masked_select.cpp and ops/nonzero.cpp: torch goldens from tests/goldens/slicing/
// make_slicing_goldens.py (broadcasting either way, NaN/±inf, 0-dim, empty), errors, gradcheck.
#include <algorithm>
#include <cmath>
#include <limits>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/goldens.h"
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

namespace test_masked_select {

const testing::GoldenFile& goldens() {
  static const testing::GoldenFile golden("slicing", "slicing.txt");
  return golden;
}

void check(const std::string& case_name) {
  const testing::GoldenFile& golden = goldens();
  for (const auto& [tag, dtype] : testing::golden_dtypes()) {
    const std::string name = case_name + "." + tag;
    INFO(name);
    Tape tape;
    TapeScope scope(tape);
    const testing::GoldenTensor& gx = golden[name + ".x"];
    const testing::GoldenTensor& gm = golden[name + ".mask"];
    const Tensor x = from_values(gx.shape, gx.values, dtype, true);
    const Tensor y = masked_select(x, from_values(gm.shape, gm.values, dtype));
    const testing::GoldenTensor& want_y = golden[name + ".y"];
    REQUIRE(y.shape() == want_y.shape);
    testing::require_golden(y.values(), want_y, dtype, 0, true, name + ".y");
    const testing::GoldenTensor& dy = golden[name + ".dy"];
    sum(y * from_values(dy.shape, dy.values, dtype)).backward();
    std::vector<double> dx = x.grad_values();
    if (dx.empty()) dx.assign(gx.values.size(), 0.0);
    // Where x is broadcast its gradient sums several picks, in another order than torch's
    // sum_to_size: within a few ulps.
    testing::require_golden(dx, golden[name + ".dx"], dtype, 4, false, name + ".dx");
  }
}

std::vector<int64_t> ints(const Ids& ids) {
  return {ids.values().begin(), ids.values().end()};
}

}  // namespace test_masked_select

TEST_CASE("masked_select: torch goldens (broadcasting x, mask or both, NaN/±inf, 0-dim, empty)",
          "[masked_select][goldens]") {
  test_masked_select::check("masked_select");
  test_masked_select::check("masked_select_mask_broadcast");
  test_masked_select::check("masked_select_x_broadcast");
  test_masked_select::check("masked_select_both_broadcast");
  test_masked_select::check("masked_select_0d");
  test_masked_select::check("masked_select_empty");
}

TEST_CASE("masked_select: a NaN mask element counts as true, shapes must broadcast",
          "[masked_select]") {
  Tape tape;
  TapeScope scope(tape);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = tensor({1.0, 2.0, 3.0});
  CHECK(masked_select(x, tensor({0.0, nan, 2.0})).values() == std::vector<double>{2, 3});
  CHECK(masked_select(x, tensor({0.0, 1.0, 1.0}, DType::Float64)).values() ==
        std::vector<double>{2, 3});  // a float64 mask for a float32 x, as masked_fill
  CHECK_THROWS_WITH(masked_select(x, zeros({2})),
                    "masked_select: x [3], mask [2]: the shapes do not broadcast");
}

TEST_CASE("nonzero: torch goldens (NaN counts, ranks 0-3, empty)", "[nonzero][goldens]") {
  const testing::GoldenFile& golden = test_masked_select::goldens();
  for (const std::string name : {"nonzero", "nonzero_rank3", "nonzero_0d", "nonzero_0d_zero",
                                 "nonzero_empty", "nonzero_none"}) {
    INFO(name);
    Tape tape;
    TapeScope scope(tape);
    const testing::GoldenTensor& gx = golden[name + ".x"];
    const testing::GoldenTensor& want = golden[name + ".indices"];
    for (const DType dtype : {DType::Float32, DType::Float64}) {
      const Ids got = nonzero(from_values(gx.shape, gx.values, dtype));
      CHECK(got.shape() == want.shape);
      CHECK(test_masked_select::ints(got) == want.ints());
    }
    if (std::none_of(gx.values.begin(), gx.values.end(), [](double v) { return std::isnan(v); })) {
      std::vector<int64_t> as_ids(gx.values.begin(), gx.values.end());
      const Ids got = nonzero(Ids(gx.shape, as_ids));
      CHECK(got.shape() == want.shape);
      CHECK(test_masked_select::ints(got) == want.ints());
    }
  }
}

GRADCHECK_TEST_CASE("masked_select", "same shape, and x broadcast against the mask") {
  const auto check = [](const Shape& x_shape, const Shape& mask_shape,
                        std::vector<double> mask_values) {
    auto report = gradcheck("masked_select",
                            [&](std::span<const Tensor> in) {
                              return masked_select(
                                  in[0], from_values(mask_shape, mask_values, DType::Float64));
                            },
                            {random_input(x_shape, 45)});
    testing::require_gradcheck(report, "masked_select");
  };
  check({2, 3}, {2, 3}, {1, 0, 1, 1, 0, 0});
  check({3}, {2, 3}, {1, 0, 1, 1, 1, 0});
  check({2, 1}, {3}, {0, 1, 1});
}
