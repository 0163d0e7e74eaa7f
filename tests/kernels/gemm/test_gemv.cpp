// Tests for kernels/gemv.*: the one-row matrix-vector product against a float64 reference, for
// sizes that exercise every tail (rows not a multiple of 8, columns not a multiple of the vector),
// with and without bias, and the same bits at 1 and 2 threads.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/gemm/gemv.h>

#include "tests/kernels/fill.h"

using namespace tapegrad;

namespace {

using tapegrad::testing::irregular_fill;

}  // namespace

TEST_CASE("gemv: y = W·x + b equals the float64 product within float32 rounding", "[gemv]") {
  for (const auto& [out, in] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {7, 5}, {8, 16}, {9, 17}, {37, 33}, {64, 768}, {1001, 95}, {3, 4096}}) {
    const std::vector<float> w = irregular_fill(static_cast<size_t>(out * in), 1);
    const std::vector<float> x = irregular_fill(static_cast<size_t>(in), 2);
    const std::vector<float> b = irregular_fill(static_cast<size_t>(out), 3);
    for (bool with_bias : {false, true}) {
      std::vector<float> y(static_cast<size_t>(out), -7.0f);
      gemv(w.data(), x.data(), with_bias ? b.data() : nullptr, y.data(), out, in);
      for (int64_t o = 0; o < out; ++o) {
        double exact = with_bias ? b[o] : 0.0, magnitude = with_bias ? std::fabs(b[o]) : 0.0;
        for (int64_t i = 0; i < in; ++i) {
          exact += static_cast<double>(w[o * in + i]) * x[i];
          magnitude += std::fabs(static_cast<double>(w[o * in + i]) * x[i]);
        }
        INFO("out " << out << " in " << in << " row " << o << " bias " << with_bias);
        // float32 summation: error at most ~n·eps·Σ|terms|
        CHECK(std::fabs(y[o] - exact) <= 1e-7 * static_cast<double>(in + 1) * magnitude + 1e-30);
      }
    }
  }
}

TEST_CASE("gemv: the same bits at one and two threads", "[gemv][threads]") {
  const int64_t out = 50257 / 7, in = 768;  // enough work for parallel_for to split
  const std::vector<float> w = irregular_fill(static_cast<size_t>(out * in), 4);
  const std::vector<float> x = irregular_fill(static_cast<size_t>(in), 5);
  const int before = num_threads();
  std::vector<float> y1(static_cast<size_t>(out)), y2(static_cast<size_t>(out));
  set_num_threads(1);
  gemv(w.data(), x.data(), nullptr, y1.data(), out, in);
  set_num_threads(2);
  gemv(w.data(), x.data(), nullptr, y2.data(), out, in);
  set_num_threads(before);
  CHECK(y1 == y2);
}
