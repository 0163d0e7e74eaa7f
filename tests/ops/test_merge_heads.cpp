// Tests for ops/merge_heads.cpp: [B, H, T, D] -> [B, T, H*D].
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/layout_goldens.h"

using namespace tapegrad;

TEST_CASE("merge_heads: small exact case", "[merge_heads]") {
  Tape tape;
  TapeScope scope(tape);
  // x[b, h, t, d] = 1000b + 100h + 10t + d; y[b, t, h*D + d] must be x[b, h, t, d].
  std::vector<double> v;
  for (int b = 0; b < 2; ++b)
    for (int h = 0; h < 2; ++h)
      for (int t = 0; t < 2; ++t)
        for (int d = 0; d < 3; ++d) v.push_back(1000 * b + 100 * h + 10 * t + d);
  Tensor y = merge_heads(from_values({2, 2, 2, 3}, v));
  CHECK(y.shape() == Shape{2, 2, 6});
  CHECK(y.values() == std::vector<double>{0,    1,    2,    100,  101,  102,  10,   11,
                                          12,   110,  111,  112,  1000, 1001, 1002, 1100,
                                          1101, 1102, 1010, 1011, 1012, 1110, 1111, 1112});
}

TEST_CASE("merge_heads: equals torch's transpose(1, 2).contiguous().view(b, T, C)",
          "[merge_heads]") {
  const auto cases = testing::layout_golden_cases("merge_heads");
  CHECK(cases.size() == 4);
  for (const auto& c : cases) {
    for (DType dtype : {DType::Float64, DType::Float32}) {
      testing::check_golden_case(
          c, {"x"}, [](std::span<const Tensor> in) { return merge_heads(in[0]); }, dtype);
    }
  }
}

TEST_CASE("merge_heads: needs a rank-4 tensor", "[merge_heads][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 3, 4});
  x.set_name("context");
  CHECK_THROWS_WITH(merge_heads(x),
                    "merge_heads: x \"context\" [2, 3, 4]: expected a 4-D [B, H, T, D] tensor");
}

GRADCHECK_TEST_CASE("merge_heads", "several shapes") {
  for (Shape shape : {Shape{1, 2, 3, 2}, Shape{2, 3, 2, 2}, Shape{2, 1, 4, 3}, Shape{1, 4, 1, 1}}) {
    INFO(shape.str());
    auto report =
        gradcheck("merge_heads", [](std::span<const Tensor> in) { return merge_heads(in[0]); },
                  {random_input(shape, 1)});
    testing::require_gradcheck(report, "merge_heads");
  }
}
