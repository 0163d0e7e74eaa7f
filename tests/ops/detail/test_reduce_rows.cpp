// Tests for ops/detail/reduce_rows.h and the row paths of the reductions that use it: the same
// picks as a scan in order, and the same results as the strided walk over a transposed copy.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/reduce_rows.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

using namespace tapegrad;

namespace test_reduce_rows {

// The scan the row kernel replaces: strictly better or a NaN takes the pick, a NaN keeps it.
template <bool Max, class T>
int64_t scan_in_order(const std::vector<T>& row) {
  int64_t best = 0;
  for (size_t k = 1; k < row.size() && !std::isnan(row[static_cast<size_t>(best)]); ++k) {
    const T v = row[k], b = row[static_cast<size_t>(best)];
    if ((Max ? v > b : v < b) || std::isnan(v)) best = static_cast<int64_t>(k);
  }
  return best;
}

// Rows of 37 (eight-lane blocks and a tail) built to catch the edge cases: ties, ±0, ±inf and
// NaNs before and after the extreme, and plain ones.
template <class T>
std::vector<std::vector<T>> tricky_rows() {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<std::vector<T>> rows;
  for (int r = 0; r < 40; ++r) {
    std::vector<T> row(37);
    for (size_t k = 0; k < row.size(); ++k) {
      row[k] = static_cast<T>(static_cast<int>((k * 7 + static_cast<size_t>(r) * 13) % 11) - 5);
    }
    const auto at = [&](int k) -> T& { return row[static_cast<size_t>(k)]; };
    switch (r % 8) {
      case 1:
        at(r % 37) = nan;
        break;
      case 2:
        at(36) = nan;
        break;
      case 3:
        at(r % 37) = inf;
        at(3) = -inf;
        break;
      case 4:
        for (T& v : row) v = r % 16 == 4 ? T(0) : -T(0);
        at(20) = T(0);
        break;
      case 5:
        for (T& v : row) v = -inf;
        break;
      case 6:
        at(35) = T(9);
        at(10) = T(9);
        at(2) = T(-9);
        at(30) = T(-9);
        break;
      default:
        break;
    }
    rows.push_back(row);
  }
  return rows;
}

template <class T>
void check_extreme_index() {
  for (const std::vector<T>& row : tricky_rows<T>()) {
    for (const int64_t n : {int64_t{37}, int64_t{16}, int64_t{5}}) {
      const std::vector<T> head(row.begin(), row.begin() + n);
      CHECK(row_extreme_index<true>(head.data(), n) == scan_in_order<true>(head));
      CHECK(row_extreme_index<false>(head.data(), n) == scan_in_order<false>(head));
    }
  }
}

}  // namespace test_reduce_rows

TEST_CASE("reduce_rows: reduces_last_dims takes a suffix of dims only", "[reduce_rows]") {
  const Shape s{2, 3, 4};
  CHECK(reduces_last_dims(s, 0b100));
  CHECK(reduces_last_dims(s, 0b110));
  CHECK(reduces_last_dims(s, 0b111));
  CHECK_FALSE(reduces_last_dims(s, 0b010));
  CHECK_FALSE(reduces_last_dims(s, 0b101));
  CHECK_FALSE(reduces_last_dims(s, 0));
  CHECK_FALSE(reduces_last_dims(Shape{}, 0b1));
}

TEST_CASE("reduce_rows: the extreme index is the in-order scan's pick", "[reduce_rows]") {
  test_reduce_rows::check_extreme_index<float>();
  test_reduce_rows::check_extreme_index<double>();
}

TEST_CASE("reduce_rows: row paths give the strided walk's results, forward and backward",
          "[reduce_rows]") {
  for (const DType dtype : {DType::Float32, DType::Float64}) {
    INFO((dtype == DType::Float32 ? "float32" : "float64"));
    Tape tape;
    TapeScope scope(tape);
    std::vector<double> values;
    for (const auto& row : test_reduce_rows::tricky_rows<double>()) {
      for (double v : row) values.push_back(std::isfinite(v) ? v * 0.37 + 0.01 * v * v : 1.5);
    }
    const Tensor x = from_values({40, 37}, values, dtype, true);
    // xt: the same rows as x's columns, so that reducing its dim 0 takes the strided walk.
    const Tensor xt = detach(transpose(x, 0, 1));
    const Tensor xt_leaf = from_values({37, 40}, xt.values(), dtype, true);
    static constexpr int kLast[] = {1}, kFirst[] = {0};
    struct Pair {
      const char* name;
      Tensor rows, strided;
      bool exact;
    };
    const Tensor w = from_values({40}, std::vector<double>(40, 1.0), dtype);
    std::vector<Pair> pairs = {
        {"amax", amax(x, kLast), amax(xt_leaf, kFirst), true},
        {"amin", amin(x, kLast), amin(xt_leaf, kFirst), true},
        {"max_dim", max(x, 1), max(xt_leaf, 0), true},
        {"min_dim", min(x, 1), min(xt_leaf, 0), true},
        {"sum_dim", sum(x, 1), sum(xt_leaf, 0), false},
        {"mean_dim", mean(x, 1), mean(xt_leaf, 0), false},
        {"var", var(x, kLast), var(xt_leaf, kFirst), false},
        {"std", tapegrad::std(x, kLast), tapegrad::std(xt_leaf, kFirst), false},
        {"logsumexp", logsumexp(x, kLast), logsumexp(xt_leaf, kFirst), false},
        {"norm 1", norm(x, 1.0, kLast), norm(xt_leaf, 1.0, kFirst), false},
        {"norm 2", norm(x, 2.0, kLast), norm(xt_leaf, 2.0, kFirst), false},
    };
    for (Pair& p : pairs) {
      INFO(p.name);
      const std::vector<double> a = p.rows.values(), b = p.strided.values();
      REQUIRE(a.size() == b.size());
      for (size_t k = 0; k < a.size(); ++k) {
        if (p.exact) {
          CHECK(a[k] == b[k]);
        } else {
          CHECK(a[k] == Approx(b[k]).epsilon(1e-6).margin(1e-6));
        }
      }
      const std::vector<double> ga =
          grad(sum(mul(p.rows, w)), {x}, {.retain_graph = true})[0].values();
      const std::vector<double> gb =
          grad(sum(mul(p.strided, w)), {xt_leaf}, {.retain_graph = true})[0].values();
      for (int64_t r = 0; r < 40; ++r) {
        for (int64_t c = 0; c < 37; ++c) {
          const double u = ga[static_cast<size_t>(r * 37 + c)];
          const double v = gb[static_cast<size_t>(c * 40 + r)];
          if (p.exact) {
            CHECK(u == v);
          } else {
            CHECK(u == Approx(v).epsilon(1e-5).margin(1e-6));
          }
        }
      }
    }
    const Ids am = argmax(x, 1), amt = argmax(xt_leaf, 0);
    CHECK(std::vector<int64_t>(am.values().begin(), am.values().end()) ==
          std::vector<int64_t>(amt.values().begin(), amt.values().end()));
    CHECK(max(x).item() == max(xt_leaf).item());
    CHECK(min(x).item() == min(xt_leaf).item());
  }
}
