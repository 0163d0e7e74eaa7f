// Tests for ops/detail/broadcast.cpp: PyTorch's broadcasting rules.
#include <tapegrad/ops/detail/broadcast.h>

#include <catch2/catch.hpp>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>

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

TEST_CASE("broadcast: operands are classified by how they read the output", "[broadcast]") {
  const Shape out{2, 3, 4};
  auto kind = [&](const Shape& x) { return classify_broadcast(x, out); };
  CHECK(kind(Shape{2, 3, 4}).kind == BroadcastKind::Same);
  CHECK(kind(Shape{1, 2, 3, 4}).kind == BroadcastKind::Same);
  CHECK(kind(Shape{}).kind == BroadcastKind::Scalar);
  CHECK(kind(Shape{1, 1}).kind == BroadcastKind::Scalar);
  CHECK(kind(Shape{4}).kind == BroadcastKind::Row);
  CHECK(kind(Shape{4}).inner == 4);
  CHECK(kind(Shape{1, 3, 4}).kind == BroadcastKind::Row);
  CHECK(kind(Shape{3, 4}).inner == 12);
  CHECK(kind(Shape{2, 3, 1}).kind == BroadcastKind::Column);
  CHECK(kind(Shape{2, 3, 1}).inner == 4);
  CHECK(kind(Shape{2, 1, 1}).kind == BroadcastKind::Column);
  CHECK(kind(Shape{2, 1, 1}).inner == 12);
  CHECK(kind(Shape{3, 1}).kind == BroadcastKind::General);
  CHECK(kind(Shape{2, 1, 4}).kind == BroadcastKind::General);
  // Size-1 dims of the output do not break a row or a column.
  CHECK(classify_broadcast(Shape{3}, Shape{2, 1, 3}).kind == BroadcastKind::Row);
  CHECK(classify_broadcast(Shape{2, 1, 1}, Shape{2, 1, 3}).kind == BroadcastKind::Column);
  CHECK(classify_broadcast(Shape{2, 1, 1}, Shape{2, 1, 3}).inner == 3);
}

namespace {
// What broadcast_apply must produce, by the plain index walk.
std::vector<double> walk_reference(const Shape& out, const std::vector<double>& a, const Shape& as,
                                   const std::vector<double>& b, const Shape& bs) {
  std::vector<double> y(static_cast<size_t>(out.numel()));
  for_each_broadcast(out, broadcast_strides(as, out), broadcast_strides(bs, out),
                     [&](int64_t o, int64_t ia, int64_t ib) {
                       y[static_cast<size_t>(o)] =
                           a[static_cast<size_t>(ia)] - 10 * b[static_cast<size_t>(ib)];
                     });
  return y;
}
std::vector<double> iota(int64_t n, double start) {
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<double>(i);
  return v;
}
}  // namespace

TEST_CASE("broadcast: apply takes every path in both operand orders", "[broadcast]") {
  // A non-commutative f (x - 10 z) catches swapped operands on the fast paths.
  const auto f = [](const auto& x, const auto& z) { return x - 10 * z; };
  const Shape out{2, 3, 4};
  for (Shape other : {Shape{2, 3, 4}, Shape{}, Shape{4}, Shape{3, 4}, Shape{2, 3, 1},
                      Shape{2, 1, 1}, Shape{3, 1}, Shape{2, 1, 4}}) {
    INFO("other operand " << other.str());
    const std::vector<double> full = iota(out.numel(), 1.0), small = iota(other.numel(), 100.0);
    std::vector<double> y(static_cast<size_t>(out.numel()), 0.0);
    broadcast_apply<false>(y.data(), out, full.data(), out, small.data(), other, f);
    CHECK(y == walk_reference(out, full, out, small, other));
    broadcast_apply<false>(y.data(), out, small.data(), other, full.data(), out, f);
    CHECK(y == walk_reference(out, small, other, full, out));
    // Accumulating adds the same values on top.
    std::vector<double> twice = y;
    for (double& v : twice) v *= 2;
    broadcast_apply<true>(y.data(), out, small.data(), other, full.data(), out, f);
    CHECK(y == twice);
  }
}

TEST_CASE("broadcast: reduce sums over the broadcast dims for every kind", "[broadcast]") {
  const Shape out{2, 3, 4};
  const std::vector<double> src = iota(out.numel(), 0.0);  // src[o] = o
  for (Shape target : {Shape{2, 3, 4}, Shape{}, Shape{1}, Shape{4}, Shape{3, 4}, Shape{2, 3, 1},
                       Shape{2, 1, 1}, Shape{3, 1}, Shape{2, 1, 4}, Shape{1, 3, 1}}) {
    INFO("reduced to " << target.str());
    // Expected: every output index adds its value to the target element it was read from.
    std::vector<double> expected(static_cast<size_t>(target.numel()), 0.5);
    const Strides s = broadcast_strides(target, out);
    for_each_broadcast(out, s, s, [&](int64_t o, int64_t i, int64_t) {
      expected[static_cast<size_t>(i)] += static_cast<double>(o);
    });
    std::vector<double> dst(static_cast<size_t>(target.numel()), 0.5);  // accumulates on top
    reduce_broadcast(src.data(), out, dst.data(), target);
    CHECK(dst == expected);
    // Subtracting takes it back off exactly (sums of small integers).
    reduce_broadcast(src.data(), out, dst.data(), target, /*subtract=*/true);
    CHECK(dst == std::vector<double>(static_cast<size_t>(target.numel()), 0.5));
  }
}

TEST_CASE("broadcast: reduce in float32 to a row and a column", "[broadcast]") {
  const std::vector<float> src{1, 2, 3, 4, 5, 6};  // [2, 3]
  std::vector<float> row(3, 0.0f), column(2, 0.0f);
  reduce_broadcast(src.data(), Shape{2, 3}, row.data(), Shape{1, 3});
  reduce_broadcast(src.data(), Shape{2, 3}, column.data(), Shape{2, 1});
  CHECK(row == std::vector<float>{5, 7, 9});
  CHECK(column == std::vector<float>{6, 15});
}

TEST_CASE("broadcast: accumulate_reduced forms the term, then reduces it", "[broadcast]") {
  Arena arena;
  const Shape out{2, 3};
  const std::vector<double> dy{1, 2, 3, 4, 5, 6};
  const std::vector<double> b{10, 100, 1000};  // [3]
  const auto times = [](const auto& x, const auto& z) { return x * z; };
  // To a [3] gradient: column sums of dy ⊙ b.
  std::vector<double> db(3, 1.0);
  accumulate_reduced(arena, db.data(), Shape{3}, out, dy.data(), b.data(), Shape{3}, times);
  CHECK(db == std::vector<double>{1 + 50, 1 + 700, 1 + 9000});
  // To a full-size gradient: no reduction, accumulated in place.
  std::vector<double> da(6, 1.0);
  accumulate_reduced(arena, da.data(), out, out, dy.data(), b.data(), Shape{3}, times);
  CHECK(da == std::vector<double>{11, 201, 3001, 41, 501, 6001});
  // To a scalar gradient.
  double ds = 0.0;
  accumulate_reduced(arena, &ds, Shape{}, out, dy.data(), b.data(), Shape{3}, times);
  CHECK(ds == 50 + 700 + 9000);
}
