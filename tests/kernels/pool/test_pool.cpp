// Tests for kernels/pool/pool.cpp on buffers: the vectorised 2×2, stride-2 max pooling against a
// plain scan with torch's rule, on ties, -inf and NaN, at widths around the vector's and odd sizes.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <tapegrad/kernels/pool/pool.h>

namespace test_pool {

// The window's maximum and its index by the rule pool.h states, value by value in scan order.
template <class T>
void reference_2x2(int64_t planes, int64_t in_h, int64_t in_w, const std::vector<T>& x,
                   std::vector<T>& y, std::vector<int64_t>& index) {
  const int64_t out_h = in_h / 2, out_w = in_w / 2;
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t oh = 0; oh < out_h; ++oh) {
      for (int64_t ow = 0; ow < out_w; ++ow) {
        T max = -std::numeric_limits<T>::infinity();
        int64_t best = 2 * oh * in_w + 2 * ow;
        for (int64_t h = 2 * oh; h < 2 * oh + 2; ++h) {
          for (int64_t w = 2 * ow; w < 2 * ow + 2; ++w) {
            const T v = x[p * in_h * in_w + h * in_w + w];
            if (v > max || std::isnan(v)) {
              max = v;
              best = h * in_w + w;
            }
          }
        }
        y[(p * out_h + oh) * out_w + ow] = max;
        index[(p * out_h + oh) * out_w + ow] = best;
      }
    }
  }
}

template <class T>
void check_2x2() {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  // Few distinct values, so windows hold ties, several NaNs, or only -inf.
  const T values[] = {-inf, -1, 0, 2, 2, nan, -inf, 2};
  uint32_t state = 12345;
  for (const int64_t in_h : {2, 3, 6}) {
    for (const int64_t in_w : {2, 5, 14, 16, 17, 28, 33}) {
      const int64_t planes = 3, out_h = in_h / 2, out_w = in_w / 2;
      std::vector<T> x(static_cast<size_t>(planes * in_h * in_w));
      for (T& v : x) {
        state = state * 1664525u + 1013904223u;
        v = values[(state >> 24) % 8];
      }
      const size_t n = static_cast<size_t>(planes * out_h * out_w);
      std::vector<T> y(n), want_y(n);
      std::vector<int64_t> index(n), want_index(n);
      tapegrad::pool::Geometry g;
      g.planes = planes;
      g.in_h = in_h;
      g.in_w = in_w;
      g.out_h = out_h;
      g.out_w = out_w;
      g.kernel_h = g.kernel_w = g.stride_h = g.stride_w = 2;
      tapegrad::pool::max_forward<T>(g, x.data(), y.data(), index.data());
      reference_2x2(planes, in_h, in_w, x, want_y, want_index);
      INFO("in " << in_h << "x" << in_w);
      CHECK(index == want_index);
      CHECK(std::memcmp(y.data(), want_y.data(), n * sizeof(T)) == 0);  // NaNs included
    }
  }
}

}  // namespace test_pool

TEST_CASE("pool kernels: 2x2 stride-2 max pooling keeps the rule on ties, -inf and NaN",
          "[pool][max_pool2d]") {
  test_pool::check_2x2<float>();
  test_pool::check_2x2<double>();
}
