// Tests for ops/expand.cpp.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("expand: [3, 1] to [2, 3, 2], -1 keeping a size", "[expand]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = from_values(Shape{3, 1}, std::vector<double>{1.0, 2.0, 3.0});
  Tensor y = expand(x, {2, -1, 2});
  CHECK(broadcast_to(x, {2, -1, 2}).values() == y.values());  // torch's alias
  CHECK(y.shape() == Shape{2, 3, 2});
  CHECK(y.values() == std::vector<double>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  CHECK(expand(scalar(4.0), Shape{2}).values() == std::vector<double>{4, 4});
  CHECK(expand(x, Shape{0, 3, 1}).numel() == 0);  // torch allows a new dim of size 0
}

TEST_CASE("expand: backward sums over the expanded dims", "[expand]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(from_values(Shape{2, 1}, std::vector<double>{1.0, 2.0}));
  tape.backward(expand(x, Shape{3, 2, 2}), std::vector<double>(12, 1.0));
  CHECK(x.grad_values() == std::vector<double>{6, 6});
}

TEST_CASE("expand: a size that is neither equal nor 1 names the shapes", "[expand][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({{1.0, 2.0}});
  CHECK_THROWS_WITH(expand(x, Shape{3, 3}), Catch::Contains("expand") &&
                                                Catch::Contains("[1, 2]") &&
                                                Catch::Contains("[3, 3]"));
  CHECK_THROWS_WITH(expand(x, Shape{2}), Catch::Contains("expand"));    // fewer dims
  CHECK_THROWS_WITH(expand(x, {-1, 1, 2}), Catch::Contains("expand"));  // -1 for a new dim
}

GRADCHECK_TEST_CASE("expand", "[3, 1] to [2, 3, 4] and a scalar to [2]") {
  testing::require_gradcheck(gradcheck("expand",
                                       [](std::span<const Tensor> in) {
                                         return expand(in[0], Shape{2, 3, 4});
                                       },
                                       {random_input({3, 1}, 1)}),
                             "expand");
  testing::require_gradcheck(
      gradcheck("expand", [](std::span<const Tensor> in) { return expand(in[0], Shape{2}); },
                {random_input({}, 2)}),
      "expand");
}
