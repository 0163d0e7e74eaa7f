// Tests for ops/transpose.cpp: swapping any two dims of ranks 0 to 4, copied.
#include <numeric>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

namespace {
std::vector<double> iota(int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0);
  return v;
}
}  // namespace

TEST_CASE("transpose: 2-D and the book's x.T", "[transpose]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  Tensor y = transpose(x, 0, 1);
  CHECK(y.shape() == Shape{3, 2});
  CHECK(y.values() == std::vector<double>{1, 4, 2, 5, 3, 6});
  CHECK(t(x).values() == y.values());
  CHECK(transpose(x, -1, -2).values() == y.values());
  // The output is a new tensor, not x's storage.
  CHECK(y.node().value != x.node().value);
}

TEST_CASE("transpose: rank 3 and 4, any pair of dims", "[transpose]") {
  Tape tape;
  TapeScope scope(tape);
  // torch.arange(24.).view(2, 3, 4).transpose(1, 2)[1, 2] == tensor([14., 18., 22.])
  Tensor x = from_values({2, 3, 4}, iota(24));
  Tensor y = transpose(x, 1, 2);
  CHECK(y.shape() == Shape{2, 4, 3});
  CHECK(select(select(y, 0, 1), 0, 2).values() == std::vector<double>{14, 18, 22});
  // Every element lands where the index swap says, for every pair in rank 4.
  Tensor x4 = from_values({2, 3, 4, 5}, iota(120));
  for (int p = 0; p < 4; ++p) {
    for (int q = 0; q < 4; ++q) {
      Tensor y4 = transpose(x4, p, q);
      const Shape s = y4.shape();
      const std::vector<double> v = y4.values();
      for (int64_t i = 0; i < 120; ++i) {
        std::array<int64_t, 4> idx{i / 60, i / 20 % 3, i / 5 % 4, i % 5};  // index into x4
        std::swap(idx[static_cast<size_t>(p)], idx[static_cast<size_t>(q)]);
        const int64_t o = ((idx[0] * s[1] + idx[1]) * s[2] + idx[2]) * s[3] + idx[3];
        if (v[static_cast<size_t>(o)] != static_cast<double>(i)) FAIL("p " << p << " q " << q);
      }
    }
  }
}

TEST_CASE("transpose: rank 0 and 1 are copies", "[transpose]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK(transpose(scalar(3.0), 0, -1).item() == 3.0);
  CHECK(transpose(tensor({1.0, 2.0}), 0, -1).values() == std::vector<double>{1, 2});
}

TEST_CASE("transpose: dims out of range", "[transpose][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 3});
  x.set_name("keys");
  CHECK_THROWS_WITH(transpose(x, 0, 2),
                    "transpose: x \"keys\" [2, 3]: dim 2 is out of range (expected -2..1)");
  CHECK_THROWS_WITH(transpose(x, -3, 0),
                    "transpose: x \"keys\" [2, 3]: dim -3 is out of range (expected -2..1)");
}

GRADCHECK_TEST_CASE("transpose", "ranks 1 to 4, several dim pairs") {
  const std::vector<std::tuple<Shape, int, int>> cases{
      {{4}, 0, 0},          {{2, 3}, 0, 1},       {{2, 3, 4}, 1, 2},
      {{2, 3, 4}, 0, 2},    {{2, 3, 4}, -1, 0},   {{2, 3, 2, 3}, 2, 3},
      {{2, 3, 2, 3}, 1, 2}, {{2, 3, 2, 3}, 0, 3}, {{2, 3, 2, 3}, 1, 1},
  };
  for (const auto& [shape, d0, d1] : cases) {
    INFO(shape.str() << " " << d0 << " " << d1);
    auto report = gradcheck(
        "transpose",
        [d0 = d0, d1 = d1](std::span<const Tensor> in) { return transpose(in[0], d0, d1); },
        {random_input(shape, 1)});
    testing::require_gradcheck(report, "transpose");
  }
}
