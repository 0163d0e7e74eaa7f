// Tests for ops/narrow.cpp: a slice start..start+length of one dim.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("narrow: rows, columns and a negative start", "[narrow]") {
  Tape tape;
  TapeScope scope(tape);
  // torch.arange(12.).view(3, 4).narrow(1, 1, 2) == tensor([[1., 2.], [5., 6.], [9., 10.]])
  Tensor x = from_values({3, 4}, std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  Tensor y = narrow(x, 1, 1, 2);
  CHECK(y.shape() == Shape{3, 2});
  CHECK(y.values() == std::vector<double>{1, 2, 5, 6, 9, 10});
  CHECK(narrow(x, 0, 1, 2).values() == std::vector<double>{4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(narrow(x, -1, -1, 1).values() == std::vector<double>{3, 7, 11});
  CHECK(narrow(x, 0, 3, 0).shape() == Shape{0, 4});
}

TEST_CASE("narrow: out-of-range slices", "[narrow][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({4, 3});
  CHECK_THROWS_WITH(narrow(x, 0, 3, 2),
                    "narrow: x [4, 3]: start 3 + length 2 exceeds size 4 of dim 0");
  CHECK_THROWS_WITH(narrow(x, 1, 5, 0),
                    "narrow: x [4, 3]: start 5 is out of range for dim 1 of size 3");
  CHECK_THROWS_WITH(narrow(x, 1, 0, -1), "narrow: x [4, 3]: length -1 is negative");
  CHECK_THROWS_WITH(narrow(x, 2, 0, 1), "narrow: x [4, 3]: dim 2 is out of range (expected -2..1)");
  CHECK_THROWS_WITH(narrow(scalar(1.0), 0, 0, 1), "narrow: x []: cannot narrow a 0-dim tensor");
}

GRADCHECK_TEST_CASE("narrow", "ranks 1 to 4, every dim") {
  const std::vector<std::tuple<Shape, int, int64_t, int64_t>> cases{
      {{5}, 0, 1, 3},          {{4, 3}, 0, 2, 2},       {{4, 3}, 1, 1, 1},
      {{2, 4, 3}, 1, 1, 2},    {{2, 4, 3}, -1, -2, 2},  {{2, 3, 4, 3}, 2, 0, 3},
      {{2, 3, 4, 3}, 0, 1, 1}, {{2, 3, 4, 3}, 3, 1, 2},
  };
  for (const auto& [shape, dim, start, length] : cases) {
    INFO(shape.str() << " dim " << dim);
    auto report =
        gradcheck("narrow",
                  [dim = dim, start = start, length = length](std::span<const Tensor> in) {
                    return narrow(in[0], dim, start, length);
                  },
                  {random_input(shape, 1)});
    testing::require_gradcheck(report, "narrow");
  }
}
