// Tests for ops/detail/strided_loop.h: the n-d walk behind broadcasting, where and swap_dims.
#include <tapegrad/ops/detail/strided_loop.h>

#include <catch2/catch.hpp>
#include <vector>

#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/layout_copy.h>

using namespace tapegrad;

namespace test_strided_loop {

// The offset of output element o (row-major over `dims`, padded) read with `strides`.
int64_t offset_of(int64_t o, const std::array<int64_t, kMaxRank>& dims, const Strides& strides) {
  int64_t offset = 0;
  for (int d = kMaxRank - 1; d >= 0; --d) {
    const auto u = static_cast<size_t>(d);
    offset += (o % dims[u]) * strides[u];
    o /= dims[u];
  }
  return offset;
}

}  // namespace test_strided_loop

TEST_CASE(
    "strided_loop: every rank 0 to 8 visits out in row-major order with each operand's "
    "offsets",
    "[strided_loop]") {
  const std::vector<int64_t> sizes{2, 3, 1, 2, 2, 1, 3, 2};
  for (int rank = 0; rank <= kMaxRank; ++rank) {
    INFO("rank " << rank);
    const Shape out(std::span<const int64_t>(sizes.data(), static_cast<size_t>(rank)));
    // a: out with every other dim 1 (broadcast); b: out's trailing half.
    std::vector<int64_t> a_dims(out.dims().begin(), out.dims().end());
    for (size_t d = 0; d < a_dims.size(); d += 2) a_dims[d] = 1;
    const Shape a{std::span<const int64_t>(a_dims)};
    const Shape b(out.dims().subspan(static_cast<size_t>(rank / 2)));
    const Strides sa = broadcast_strides(a, out), sb = broadcast_strides(b, out);
    const std::array<int64_t, kMaxRank> dims = padded_dims(out);
    std::vector<int64_t> seen;
    for_each_broadcast(out, sa, sb, [&](int64_t o, int64_t ia, int64_t ib) {
      seen.push_back(o);
      CHECK(ia == test_strided_loop::offset_of(o, dims, sa));
      CHECK(ib == test_strided_loop::offset_of(o, dims, sb));
    });
    REQUIRE(static_cast<int64_t>(seen.size()) == out.numel());
    for (size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == static_cast<int64_t>(i));
  }
}

TEST_CASE("strided_loop: an empty dim anywhere visits nothing", "[strided_loop]") {
  const Shape out{2, 1, 3, 0, 2, 1, 2};
  const Strides s = broadcast_strides(out, out);
  int calls = 0;
  for_each_strided_row<1>(padded_dims(out), {&s},
                          [&](int64_t, const std::array<int64_t, 1>&) { ++calls; });
  CHECK(calls == 0);
}

TEST_CASE("strided_loop: swap_dims at rank 8 matches the index formula", "[strided_loop]") {
  const std::vector<int64_t> dims{2, 1, 3, 2, 1, 2, 3, 2};
  const Shape in(std::span<const int64_t>(dims.data(), dims.size()));
  std::vector<double> src(static_cast<size_t>(in.numel()));
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<double>(i);
  for (const auto& [p, q] : {std::pair{0, 7}, std::pair{2, 5}, std::pair{6, 7}}) {
    INFO("dims " << p << " and " << q);
    std::vector<int64_t> out_dims = dims;
    std::swap(out_dims[static_cast<size_t>(p)], out_dims[static_cast<size_t>(q)]);
    const Shape out(std::span<const int64_t>(out_dims.data(), out_dims.size()));
    Strides read = in.strides();  // rank 8: no padding; swapped like the dims
    std::swap(read[static_cast<size_t>(p)], read[static_cast<size_t>(q)]);
    std::vector<double> dst(src.size(), 0.0);
    layout::swap_dims<false>(src.data(), dims, p, q, dst.data());
    for (int64_t o = 0; o < out.numel(); ++o) {
      CHECK(dst[static_cast<size_t>(o)] ==
            src[static_cast<size_t>(test_strided_loop::offset_of(o, padded_dims(out), read))]);
    }
  }
}
