// Tests for ops/cat.cpp: joining tensors along one dim.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("cat: along rows and along the last dim", "[cat]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = tensor({{1.0, 2.0}, {3.0, 4.0}});
  Tensor b = tensor({{5.0, 6.0}});
  Tensor rows = cat({a, b}, 0);
  CHECK(rows.shape() == Shape{3, 2});
  CHECK(rows.values() == std::vector<double>{1, 2, 3, 4, 5, 6});
  // torch.cat((a, torch.tensor([[7.], [8.]]), a), dim=-1)
  Tensor cols = cat({a, from_values({2, 1}, std::vector<double>{7.0, 8.0}), a}, -1);
  CHECK(cols.shape() == Shape{2, 5});
  CHECK(cols.values() == std::vector<double>{1, 2, 7, 1, 2, 3, 4, 8, 3, 4});
  Tensor one = cat({a}, 1);
  CHECK(one.values() == a.values());
  CHECK(one.node().value != a.node().value);
}

TEST_CASE("cat: rank 3, the middle dim (the book's head outputs joined)", "[cat]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = from_values({2, 1, 2}, std::vector<double>{1, 2, 3, 4});
  Tensor b = from_values({2, 2, 2}, std::vector<double>{5, 6, 7, 8, 9, 10, 11, 12});
  Tensor y = cat({a, b}, 1);
  CHECK(y.shape() == Shape{2, 3, 2});
  CHECK(y.values() == std::vector<double>{1, 2, 5, 6, 7, 8, 3, 4, 9, 10, 11, 12});
}

TEST_CASE("cat: mismatched operands", "[cat][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = zeros({2, 3});
  a.set_name("head0");
  CHECK_THROWS_WITH(cat({a, zeros({3, 4})}, 1),
                    "cat: xs[0] \"head0\" [2, 3] and xs[1] [3, 4]: sizes differ in dim 0 (2 vs 3) "
                    "when joining along dim 1");
  CHECK_THROWS_WITH(cat({a, zeros({2, 3}), zeros({2})}, 0),
                    "cat: xs[0] \"head0\" [2, 3] and xs[2] [2]: ranks differ (2 vs 1)");
  CHECK_THROWS_WITH(cat({a, zeros({2, 3}, DType::Float64)}, 0),
                    "cat: xs[0] \"head0\" [2, 3] and xs[1] [2, 3]: dtypes differ (float32 vs "
                    "float64)");
  CHECK_THROWS_WITH(cat({a}, 2),
                    "cat: xs[0] \"head0\" [2, 3]: dim 2 is out of range (expected -2..1)");
  CHECK_THROWS_WITH(cat({scalar(1.0)}, 0), "cat: xs[0] []: a 0-dim tensor cannot be concatenated");
  CHECK_THROWS_WITH(cat(std::span<const Tensor>(), 0), "cat: expected at least one tensor");
}

GRADCHECK_TEST_CASE("cat", "ranks 1 to 4, every dim, repeated inputs") {
  auto two = gradcheck("cat",
                       [](std::span<const Tensor> in) {
                         return cat({in[0], in[1]}, 0);
                       },
                       {random_input({3}, 1), random_input({2}, 2)});
  testing::require_gradcheck(two, "cat");
  for (int dim = 0; dim < 3; ++dim) {
    Shape a{2, 3, 2}, b{2, 3, 2}, c{2, 3, 2};
    b[dim] = 1;
    c[dim] = 3;
    INFO("rank 3, dim " << dim);
    auto report = gradcheck("cat", [dim](std::span<const Tensor> in) { return cat(in, dim); },
                            {random_input(a, 3), random_input(b, 4), random_input(c, 5)});
    testing::require_gradcheck(report, "cat");
  }
  auto rank4 = gradcheck("cat",
                         [](std::span<const Tensor> in) {
                           return cat({in[0], in[1]}, -1);
                         },
                         {random_input({2, 2, 2, 3}, 6), random_input({2, 2, 2, 1}, 7)});
  testing::require_gradcheck(rank4, "cat");
  auto repeated = gradcheck("cat",
                            [](std::span<const Tensor> in) {
                              return cat({in[0], in[1], in[0]}, 1);
                            },
                            {random_input({2, 2}, 8), random_input({2, 3}, 9)});
  testing::require_gradcheck(repeated, "cat");
}
