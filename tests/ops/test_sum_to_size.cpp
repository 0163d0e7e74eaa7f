// Tests for ops/sum_to_size.cpp.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("sum_to_size: [2, 3] to [3], [1, 3], [2, 1] and []", "[sum_to_size]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  CHECK(sum_to_size(x, Shape{3}).values() == std::vector<double>{5, 7, 9});
  CHECK(sum_to_size(x, Shape{1, 3}).shape() == Shape{1, 3});
  CHECK(sum_to_size(x, Shape{2, 1}).values() == std::vector<double>{6, 15});
  CHECK(sum_to_size(x, Shape{}).values() == std::vector<double>{21});
  CHECK(sum_to_size(x, Shape{2, 3}).id() == x.id());  // x itself, as torch
}

TEST_CASE("sum_to_size: backward broadcasts the gradient back", "[sum_to_size]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({{1.0, 2.0}, {3.0, 4.0}}));
  tape.backward(sum_to_size(x, Shape{2}), std::vector<double>{1.0, 10.0});
  CHECK(x.grad_values() == std::vector<double>{1, 10, 1, 10});
}

TEST_CASE("sum_to_size: a size that does not expand to x names both", "[sum_to_size][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({{1.0, 2.0, 3.0}});
  CHECK_THROWS_WITH(sum_to_size(x, Shape{2}), Catch::Contains("sum_to_size") &&
                                                  Catch::Contains("[2]") &&
                                                  Catch::Contains("[1, 3]"));
  CHECK_THROWS_WITH(sum_to_size(x, Shape{2, 1, 3}), Catch::Contains("sum_to_size"));
}

GRADCHECK_TEST_CASE("sum_to_size", "[2, 3, 4] to [3, 1] and to []") {
  testing::require_gradcheck(gradcheck("sum_to_size",
                                       [](std::span<const Tensor> in) {
                                         return sum_to_size(in[0], Shape{3, 1});
                                       },
                                       {random_input({2, 3, 4}, 3)}),
                             "sum_to_size");
  testing::require_gradcheck(
      gradcheck("sum_to_size",
                [](std::span<const Tensor> in) { return sum_to_size(in[0], Shape{}); },
                {random_input({2, 3}, 4)}),
      "sum_to_size");
}
