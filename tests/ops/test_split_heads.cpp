// Tests for ops/split_heads.cpp: [B, T, C] -> [B, H, T, C/H].
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/layout_goldens.h"

using namespace tapegrad;

TEST_CASE("split_heads: small exact case", "[split_heads]") {
  Tape tape;
  TapeScope scope(tape);
  // x[b, t, c] = 100b + 10t + c; y[b, h, t, d] must be x[b, t, 2h + d].
  std::vector<double> v;
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 3; ++t)
      for (int c = 0; c < 4; ++c) v.push_back(100 * b + 10 * t + c);
  Tensor y = split_heads(from_values({2, 3, 4}, v), 2);
  CHECK(y.shape() == Shape{2, 2, 3, 2});
  CHECK(y.values() == std::vector<double>{0,   1,   10,  11,  20,  21,  2,   3,
                                          12,  13,  22,  23,  100, 101, 110, 111,
                                          120, 121, 102, 103, 112, 113, 122, 123});
}

TEST_CASE("split_heads: equals torch's view(b, T, H, D).transpose(1, 2), with gradients",
          "[split_heads]") {
  // make_layout_goldens.py: x.view(b, t, h, c // h).transpose(1, 2) and its gradient.
  const auto cases = testing::layout_golden_cases("split_heads");
  CHECK(cases.size() == 4);
  for (const auto& c : cases) {
    const int64_t heads = c.get("y").shape[1];
    for (DType dtype : {DType::Float64, DType::Float32}) {
      testing::check_golden_case(
          c, {"x"}, [heads](std::span<const Tensor> in) { return split_heads(in[0], heads); },
          dtype);
    }
  }
}

TEST_CASE("split_heads and merge_heads round trip to the identity", "[split_heads]") {
  Tape tape;
  TapeScope scope(tape);
  for (int64_t heads : {1, 2, 3, 6}) {
    auto in = random_input({2, 5, 6}, static_cast<uint64_t>(heads));
    Tensor x = from_values(in.shape, in.values, DType::Float64);
    Tensor heads_first = split_heads(x, heads);
    CHECK(heads_first.shape() == Shape{2, heads, 5, 6 / heads});
    Tensor back = merge_heads(heads_first);
    CHECK(back.shape() == x.shape());
    CHECK(back.values() == x.values());
    CHECK(split_heads(back, heads).values() == heads_first.values());
  }
}

TEST_CASE("split_heads: C not divisible by H, and bad ranks", "[split_heads][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 6, 5});
  x.set_name("queries");
  CHECK_THROWS_WITH(split_heads(x, 2),
                    "split_heads: x \"queries\" [2, 6, 5]: C 5 is not divisible by num_heads 2");
  CHECK_THROWS_WITH(split_heads(x, 0),
                    "split_heads: x \"queries\" [2, 6, 5]: num_heads must be positive (got 0)");
  CHECK_THROWS_WITH(split_heads(zeros({6, 4}), 2),
                    "split_heads: x [6, 4]: expected a 3-D [B, T, C] tensor");
}

GRADCHECK_TEST_CASE("split_heads", "several shapes and head counts") {
  for (auto [b, t, c, h] : {std::tuple{1, 2, 4, 2}, {2, 3, 6, 3}, {2, 4, 4, 1}, {3, 2, 6, 6}}) {
    INFO(b << " " << t << " " << c << " " << h);
    auto report = gradcheck("split_heads",
                            [h = h](std::span<const Tensor> in) { return split_heads(in[0], h); },
                            {random_input({b, t, c}, 1)});
    testing::require_gradcheck(report, "split_heads");
  }
}
