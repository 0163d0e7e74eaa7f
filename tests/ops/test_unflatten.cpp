// Tests for ops/unflatten.cpp: one dim split into several.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/indexing_goldens.h"

using namespace tapegrad;

TEST_CASE("unflatten: torch goldens (sizes, an inferred -1, zero-size)", "[unflatten][goldens]") {
  testing::check_unary_indexing("unflatten", [](const Tensor& x) {
    return unflatten(x, 1, {2, 3});
  });
  testing::check_unary_indexing("unflatten_infer", [](const Tensor& x) {
    return unflatten(x, -1, {-1, 2});
  });
  testing::check_unary_indexing("unflatten_empty", [](const Tensor& x) {
    return unflatten(x, 1, {2, 2});
  });
}

TEST_CASE("unflatten: sizes that do not fill the dim, two -1, too high a rank",
          "[unflatten][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros({2, 6});
  CHECK_THROWS_WITH(unflatten(x, 1, {4, 2}),
                    "unflatten: x [2, 6]: sizes [4, 2] multiply to 8, not to size 6 of dim 1");
  CHECK_THROWS_WITH(unflatten(x, 1, {-1, 4}),
                    "unflatten: x [2, 6]: sizes [-1, 4] cannot fill dim 1 of size 6");
  CHECK_THROWS_WITH(unflatten(x, 1, {-1, -1}),
                    "unflatten: x [2, 6]: sizes [-1, -1] has more than one -1");
  CHECK_THROWS_WITH(unflatten(x, 0, {-2, -1}), Catch::Contains("has invalid size -2"));
  CHECK_THROWS_WITH(unflatten(x, 1, {int64_t{1} << 40, int64_t{1} << 40}),
                    Catch::Contains("multiply to more than 2^60"));
  CHECK_THROWS_WITH(unflatten(x, 1, {}), "unflatten: x [2, 6]: sizes [] is empty");
  CHECK_THROWS_WITH(unflatten(x, 1, {1, 2, 1, 1, 3, 1, 1, 1}),
                    Catch::Contains("the result would have rank 9, above the maximum of 8"));
  CHECK_THROWS_WITH(unflatten(scalar(1.0), 0, {1}),
                    "unflatten: x []: cannot unflatten a 0-dim tensor");
}

GRADCHECK_TEST_CASE("unflatten", "a dim into two and three") {
  auto report = gradcheck("unflatten",
                          [](std::span<const Tensor> in) {
                            return unflatten(in[0], 0, {2, -1});
                          },
                          {random_input({4, 3}, 1)});
  testing::require_gradcheck(report, "unflatten");
  report = gradcheck("unflatten",
                     [](std::span<const Tensor> in) {
                       return unflatten(in[0], -1, {1, 2, 3});
                     },
                     {random_input({2, 6}, 2)});
  testing::require_gradcheck(report, "unflatten");
}
