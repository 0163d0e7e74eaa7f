// Tests for ops/reshape.cpp: a new shape with one inferred -1, copied.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("reshape: keeps row-major order, infers one -1", "[reshape]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  Tensor y = reshape(x, {3, -1});
  CHECK(y.shape() == Shape{3, 2});
  CHECK(y.values() == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(reshape(x, {-1}).shape() == Shape{6});
  CHECK(reshape(x, {1, 2, 1, 3}).shape() == Shape{1, 2, 1, 3});
  CHECK(reshape(tensor({7.0}), {}).shape() == Shape{});
  const std::vector<int64_t> dims{2, -1, 1};
  CHECK(reshape(x, std::span<const int64_t>(dims)).shape() == Shape{2, 3, 1});
  CHECK(y.node().value != x.node().value);
}

TEST_CASE("reshape: invalid shapes", "[reshape][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 3});
  x.set_name("context");
  CHECK_THROWS_WITH(reshape(x, {4, 2}),
                    "reshape: x \"context\" [2, 3]: shape [4, 2] is invalid for 6 elements");
  CHECK_THROWS_WITH(reshape(x, {4, -1}),
                    "reshape: x \"context\" [2, 3]: shape [4, -1] is invalid for 6 elements");
  CHECK_THROWS_WITH(reshape(x, {-1, -1}),
                    "reshape: x \"context\" [2, 3]: shape [-1, -1] has more than one -1");
  CHECK_THROWS_WITH(reshape(x, {-2, -3}),
                    "reshape: x \"context\" [2, 3]: shape [-2, -3] has invalid size -2");
  CHECK_THROWS_WITH(reshape(x, {1, 1, 1, 1, 1, 1, 1, 2, 3}),
                    "reshape: x \"context\" [2, 3]: shape [1, 1, 1, 1, 1, 1, 1, 2, 3] has rank 9, "
                    "above the maximum of 8");
  CHECK_THROWS_WITH(reshape(zeros({0, 3}), {0, -1}),
                    "reshape: x [0, 3]: shape [0, -1] is ambiguous: the -1 could be any size");
}

GRADCHECK_TEST_CASE("reshape", "several shapes") {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases{
      {{6}, {2, 3}}, {{2, 3, 4}, {4, -1}}, {{2, 2, 3, 2}, {-1, 3, 4}}, {{2, 6}, {2, 1, 3, 2}}};
  for (const auto& [shape, dims] : cases) {
    INFO(shape.str());
    auto report = gradcheck("reshape",
                            [&dims = dims](std::span<const Tensor> in) {
                              return reshape(in[0], std::span<const int64_t>(dims));
                            },
                            {random_input(shape, 1)});
    testing::require_gradcheck(report, "reshape");
  }
}
