// Tests for kernels/gemm/transpose.*: at every CPU level here, dst = srcᵀ and dst += srcᵀ for
// shapes around the register blocks (16 floats at AVX-512, 8 at AVX2, 4 at SSE; half as many
// doubles) and padded strides, against the element-by-element definition, bit for bit.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/gemm/transpose.h>

#include "tests/kernels/isa_testing.h"

using namespace tapegrad;

namespace {

template <class T>
void check_transposes() {
  for (const CpuCapability level : testing::cpu_levels_here()) {
    const testing::CpuLevelGuard guard(level);
    for (const int64_t rows : {1, 3, 8, 16, 17, 35}) {
      for (const int64_t cols : {1, 4, 15, 16, 33}) {
        const int64_t src_ld = cols + 3, dst_ld = rows + 5;
        std::vector<T> src(static_cast<size_t>(rows * src_ld));
        for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<T>(0.37 * i - 11.0);
        for (const bool add : {false, true}) {
          INFO(cpu_capability_name(level) << ": " << rows << " x " << cols << (add ? ", add" : ""));
          std::vector<T> dst(static_cast<size_t>(cols * dst_ld), T(-2.5)), want = dst;
          detail::transpose(src.data(), src_ld, rows, cols, dst.data(), dst_ld, add);
          for (int64_t c = 0; c < cols; ++c) {
            for (int64_t r = 0; r < rows; ++r) {
              T& w = want[static_cast<size_t>(c * dst_ld + r)];
              const T v = src[static_cast<size_t>(r * src_ld + c)];
              w = add ? w + v : v;
            }
          }
          CHECK(dst == want);  // the padding between rows untouched too
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("transpose: every CPU level here gives the definition's bits, float32 and float64",
          "[transpose][isa]") {
  check_transposes<float>();
  check_transposes<double>();
}
