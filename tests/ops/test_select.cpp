// Tests for ops/select.cpp: x[index] along a dim, the dim removed.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("select: the book's inputs[1] and a column", "[select]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor inputs = tensor({{0.43, 0.15, 0.89},
                          {0.55, 0.87, 0.66},
                          {0.57, 0.85, 0.64},
                          {0.22, 0.58, 0.33},
                          {0.77, 0.25, 0.10},
                          {0.05, 0.80, 0.55}});
  Tensor x2 = select(inputs, 0, 1);
  CHECK(x2.shape() == Shape{3});
  CHECK(x2.values() == tensor({0.55, 0.87, 0.66}).values());
  CHECK(select(inputs, 0, -1).values() == tensor({0.05, 0.80, 0.55}).values());
  CHECK(select(inputs, 1, 2).values() == tensor({0.89, 0.66, 0.64, 0.33, 0.10, 0.55}).values());
  Tensor s = select(x2, 0, 2);
  CHECK(s.shape() == Shape{});
  CHECK(s.item() == tensor({0.66}).item());
}

TEST_CASE("select: middle dim of a rank-3 tensor", "[select]") {
  Tape tape;
  TapeScope scope(tape);
  // torch.arange(12.).view(2, 3, 2).select(1, 1) == tensor([[2., 3.], [8., 9.]])
  Tensor x = from_values({2, 3, 2}, std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  Tensor y = select(x, 1, 1);
  CHECK(y.shape() == Shape{2, 2});
  CHECK(y.values() == std::vector<double>{2, 3, 8, 9});
  CHECK(select(x, -1, -2).values() == std::vector<double>{0, 2, 4, 6, 8, 10});
}

TEST_CASE("select: index and dim out of range", "[select][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 3});
  x.set_name("attn_weights");
  CHECK_THROWS_WITH(select(x, 1, 3),
                    "select: x \"attn_weights\" [2, 3]: index 3 is out of range for dim 1 of "
                    "size 3");
  CHECK_THROWS_WITH(select(x, 0, -3),
                    "select: x \"attn_weights\" [2, 3]: index -3 is out of range for dim 0 of "
                    "size 2");
  CHECK_THROWS_WITH(select(x, 2, 0),
                    "select: x \"attn_weights\" [2, 3]: dim 2 is out of range (expected -2..1)");
  CHECK_THROWS_WITH(select(scalar(1.0), 0, 0), "select: x []: cannot select from a 0-dim tensor");
}

GRADCHECK_TEST_CASE("select", "ranks 1 to 4, every dim") {
  const std::vector<std::tuple<Shape, int, int64_t>> cases{
      {{4}, 0, 2},       {{3, 4}, 0, 1},       {{3, 4}, 1, -1},       {{2, 3, 4}, 1, 0},
      {{2, 3, 4}, 2, 3}, {{2, 3, 2, 3}, 0, 1}, {{2, 3, 2, 3}, 2, -2}, {{2, 3, 2, 3}, 3, 1},
  };
  for (const auto& [shape, dim, index] : cases) {
    INFO(shape.str() << " dim " << dim << " index " << index);
    auto report = gradcheck("select",
                            [dim = dim, index = index](std::span<const Tensor> in) {
                              return select(in[0], dim, index);
                            },
                            {random_input(shape, 1)});
    testing::require_gradcheck(report, "select");
  }
}
