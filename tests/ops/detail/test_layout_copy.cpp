// Tests for ops/detail/layout_copy.h: the dim-swap and block-copy loops behind the layout ops.
#include <catch2/catch.hpp>
#include <numeric>

#include <tapegrad/ops/detail/layout_copy.h>

using namespace tapegrad;

TEST_CASE("layout_copy: swap_dims matches the index formula, copying and adding", "[layout]") {
  const std::array<int64_t, 4> dims{2, 3, 4, 5};
  std::vector<double> src(120), dst(120);
  std::iota(src.begin(), src.end(), 0.0);
  for (int p = 0; p < 4; ++p) {
    for (int q = p + 1; q < 4; ++q) {
      std::array<int64_t, 4> out = dims;
      std::swap(out[static_cast<size_t>(p)], out[static_cast<size_t>(q)]);
      layout::swap_dims<false>(src.data(), dims, p, q, dst.data());
      std::vector<double> twice(120, 1.0);
      layout::swap_dims<true>(src.data(), dims, p, q, twice.data());
      for (int64_t i = 0; i < 120; ++i) {
        std::array<int64_t, 4> idx{i / 60, i / 20 % 3, i / 5 % 4, i % 5};
        std::swap(idx[static_cast<size_t>(p)], idx[static_cast<size_t>(q)]);
        const auto o =
            static_cast<size_t>(((idx[0] * out[1] + idx[1]) * out[2] + idx[2]) * out[3] + idx[3]);
        INFO("p " << p << " q " << q << " element " << i);
        REQUIRE(dst[o] == static_cast<double>(i));
        REQUIRE(twice[o] == static_cast<double>(i) + 1.0);
      }
    }
  }
}

TEST_CASE("layout_copy: swap_dims of a lower rank, and of a dim with itself", "[layout]") {
  const std::vector<float> src{1, 2, 3, 4, 5, 6};
  std::vector<float> dst(6);
  const std::array<int64_t, 2> dims{2, 3};
  layout::swap_dims<false>(src.data(), dims, 0, 1, dst.data());
  CHECK(dst == std::vector<float>{1, 4, 2, 5, 3, 6});
  layout::swap_dims<false>(src.data(), dims, 1, 1, dst.data());
  CHECK(dst == src);
}

TEST_CASE("layout_copy: copy_blocks with different steps", "[layout]") {
  const std::vector<double> src{0, 1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<double> dst(6, 10.0);
  // Columns 1..2 of a [3, 3] matrix into a [3, 2] one, added.
  layout::copy_blocks<true>(src.data() + 1, 3, dst.data(), 2, 3, 2);
  CHECK(dst == std::vector<double>{11, 12, 14, 15, 17, 18});
}
