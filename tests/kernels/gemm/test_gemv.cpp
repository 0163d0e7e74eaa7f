// Tests for kernels/gemm/gemv.*: the one-row matrix-vector product against a float64 reference,
// for sizes that exercise every tail (rows not a multiple of 8, columns not a multiple of the
// vector), with and without bias; at every CPU level here, each row (of float32 and of bfloat16
// weights) against its sum in the kernel's order, bit for bit (gemv_isa.cpp: fused products where
// the level has FMA), so the same bits at avx2 and above; and the same bits at 1 and 2 threads.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/gemm/gemv.h>
#include <tapegrad/kernels/gemm/linear_bf16.h>

#include "tests/kernels/fill.h"
#include "tests/kernels/isa_testing.h"

using namespace tapegrad;

namespace {

using tapegrad::testing::irregular_fill;

// acc + a·b, the product fused into the sum or rounded first.
float multiply_add(float acc, float a, float b, bool fused) {
  if (fused) return std::fma(a, b, acc);
  const float product = a * b;
  return acc + product;
}

// Row o of W·x as gemv_isa.cpp sums it: two running 16-lane vectors over pairs of 16-column
// chunks (a lone last chunk into the first), their lanes added in order, then the columns past
// the last whole chunk.
float row_in_kernel_order(const std::vector<float>& w, const std::vector<float>& x, int64_t o,
                          int64_t in, bool fused) {
  constexpr int64_t L = 16;
  float acc0[L] = {}, acc1[L] = {};
  const float* row = w.data() + o * in;
  int64_t i = 0;
  for (; i + 2 * L <= in; i += 2 * L) {
    for (int64_t l = 0; l < L; ++l) {
      acc0[l] = multiply_add(acc0[l], row[i + l], x[static_cast<size_t>(i + l)], fused);
      acc1[l] = multiply_add(acc1[l], row[i + L + l], x[static_cast<size_t>(i + L + l)], fused);
    }
  }
  for (; i + L <= in; i += L) {
    for (int64_t l = 0; l < L; ++l) {
      acc0[l] = multiply_add(acc0[l], row[i + l], x[static_cast<size_t>(i + l)], fused);
    }
  }
  float s = 0.0f;
  for (int64_t l = 0; l < L; ++l) s += acc0[l] + acc1[l];
  for (; i < in; ++i) s = multiply_add(s, row[i], x[static_cast<size_t>(i)], fused);
  return s;
}

// Row o of bfloat16 W·x as gemv_isa.cpp's rows_bf16 sums it: per block of 32 weights, lane l of
// one vector takes weight 2l, of the other 2l + 1; their lanes added in order, then the tail.
float bf16_row_in_kernel_order(const std::vector<uint16_t>& w, const std::vector<float>& x,
                               int64_t o, int64_t in, bool fused) {
  constexpr int64_t L = 16, P = 32;
  float even[L] = {}, odd[L] = {};
  const uint16_t* row = w.data() + o * in;
  const int64_t full = in - in % P;
  for (int64_t i = 0; i < full; i += P) {
    for (int64_t l = 0; l < L; ++l) {
      even[l] = multiply_add(even[l], bf16_bits_to_float(row[i + 2 * l]),
                             x[static_cast<size_t>(i + 2 * l)], fused);
      odd[l] = multiply_add(odd[l], bf16_bits_to_float(row[i + 2 * l + 1]),
                            x[static_cast<size_t>(i + 2 * l + 1)], fused);
    }
  }
  float s = 0.0f;
  for (int64_t l = 0; l < L; ++l) s += even[l] + odd[l];
  for (int64_t j = full; j < in; ++j) {
    s = multiply_add(s, bf16_bits_to_float(row[j]), x[static_cast<size_t>(j)], fused);
  }
  return s;
}

}  // namespace

TEST_CASE("gemv: each CPU level here sums every row in the kernel's order, bit for bit",
          "[gemv][isa]") {
  for (const CpuCapability level : testing::cpu_levels_here()) {
    const testing::CpuLevelGuard guard(level);
    for (const auto& [out, in] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 1}, {9, 17}, {37, 33}, {17, 48}, {64, 768}, {3, 4096}}) {
      INFO(cpu_capability_name(level) << ": out " << out << " in " << in);
      const std::vector<float> w = irregular_fill(static_cast<size_t>(out * in), 6);
      const std::vector<float> x = irregular_fill(static_cast<size_t>(in), 7);
      std::vector<float> y(static_cast<size_t>(out)), want(static_cast<size_t>(out));
      gemv(w.data(), x.data(), nullptr, y.data(), out, in);
      for (int64_t o = 0; o < out; ++o)
        want[o] = row_in_kernel_order(w, x, o, in, testing::level_fuses(level));
      CHECK(y == want);
      std::vector<uint16_t> w16(w.size());
      round_to_bf16_bits(w.data(), w16.data(), out * in);
      gemv_bf16(w16.data(), x.data(), nullptr, y.data(), out, in);
      for (int64_t o = 0; o < out; ++o) {
        want[o] = bf16_row_in_kernel_order(w16, x, o, in, testing::level_fuses(level));
      }
      CHECK(y == want);
    }
  }
}

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
