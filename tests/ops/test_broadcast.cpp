// Tests for ops/broadcast.cpp: PyTorch's broadcasting rules.
#include "ops/broadcast.h"

#include <catch2/catch.hpp>
#include <vector>

#include "graph/error.h"
#include "graph/factory.h"

using namespace tapegrad;

TEST_CASE("broadcast: shapes follow torch's rules", "[broadcast]") {
  bool ok = false;
  CHECK(broadcast_shape(Shape{2, 1, 4}, Shape{3, 1}, &ok) == Shape{2, 3, 4});
  CHECK(ok);
  CHECK(broadcast_shape(Shape{}, Shape{5}, &ok) == Shape{5});
  CHECK(ok);
  broadcast_shape(Shape{2, 3}, Shape{4}, &ok);
  CHECK_FALSE(ok);
}

TEST_CASE("broadcast: the error names both operands and the dim", "[broadcast][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = zeros({2, 3});
  a.set_name("scores");
  CHECK_THROWS_WITH(broadcast_shape("add", a, "+", zeros({4})),
                    "add: a \"scores\" [2, 3] + b [4]: cannot broadcast (dim -1: 3 vs 4)");
}

TEST_CASE("broadcast: the walk visits matching elements", "[broadcast]") {
  const Shape out{2, 3};
  const Strides sa = broadcast_strides(Shape{2, 1}, out);  // a column, repeated across
  const Strides sb = broadcast_strides(Shape{3}, out);     // a row, repeated down
  std::vector<int64_t> a_idx, b_idx;
  for_each_broadcast(out, sa, sb, [&](int64_t, int64_t ia, int64_t ib) {
    a_idx.push_back(ia);
    b_idx.push_back(ib);
  });
  CHECK(a_idx == std::vector<int64_t>{0, 0, 0, 1, 1, 1});
  CHECK(b_idx == std::vector<int64_t>{0, 1, 2, 0, 1, 2});
}
