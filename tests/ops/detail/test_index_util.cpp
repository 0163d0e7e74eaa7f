// Tests for ops/detail/index_util.h: for_each_indexed's row walk against the offsets computed
// position by position.
#include <catch2/catch.hpp>
#include <vector>

#include <tapegrad/ops/detail/index_util.h>

using namespace tapegrad;

TEST_CASE("index_util: for_each_indexed visits every position in order with its offset",
          "[index_util]") {
  const Shape x_shape{3, 4, 5}, index_shape{2, 3, 4};
  std::vector<int64_t> index(static_cast<size_t>(index_shape.numel()));
  for (size_t p = 0; p < index.size(); ++p) index[p] = static_cast<int64_t>((p * 7) % 3);
  const std::array<int64_t, kMaxRank> strides = x_shape.strides();
  for (int dim = 0; dim < 3; ++dim) {
    INFO("dim " << dim);
    std::vector<int64_t> ps, offsets, want;
    for_each_indexed(index_shape, x_shape, dim, index.data(), [&](int64_t p, int64_t offset) {
      ps.push_back(p);
      offsets.push_back(offset);
    });
    for (int64_t a = 0, p = 0; a < 2; ++a) {
      for (int64_t b = 0; b < 3; ++b) {
        for (int64_t c = 0; c < 4; ++c, ++p) {
          int64_t at[3] = {a, b, c};
          at[dim] = index[static_cast<size_t>(p)];
          want.push_back(at[0] * strides[0] + at[1] * strides[1] + at[2] * strides[2]);
        }
      }
    }
    std::vector<int64_t> in_order(ps.size());
    for (size_t k = 0; k < in_order.size(); ++k) in_order[k] = static_cast<int64_t>(k);
    CHECK(ps == in_order);
    CHECK(offsets == want);
  }
  int calls = 0;
  for_each_indexed(Shape{2, 0}, Shape{2, 3}, 1, index.data(), [&](int64_t, int64_t) { ++calls; });
  CHECK(calls == 0);
  for_each_indexed(Shape{}, Shape{}, 0, index.data(), [&](int64_t p, int64_t offset) {
    CHECK(p == 0);
    CHECK(offset == 0);
    ++calls;
  });
  CHECK(calls == 1);
}
