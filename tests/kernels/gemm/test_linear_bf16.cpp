// Tests for kernels/linear_bf16.*: the bfloat16 rounding of weights, the one-row kernel and the
// many-row path against a float64 product of the bfloat16-rounded weights (tight: only float32
// summation error) and the same bits at 1 and 2 threads. The kernels use no AVX512_BF16
// instruction, so there is no second path for CPUs without it to compare.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/gemm/linear_bf16.h>
#include <tapegrad/kernels/gemm/matmul_precision.h>

#include "tests/kernels/fill.h"

using namespace tapegrad;

namespace {

using tapegrad::testing::irregular_fill;

std::vector<uint16_t> to_bits(const std::vector<float>& w) {
  std::vector<uint16_t> bits(w.size());
  round_to_bf16_bits(w.data(), bits.data(), static_cast<int64_t>(w.size()));
  return bits;
}

// Checks y[r, o] against Σ_i bf16(W)[o, i]·x[r, i] (+ b[o]) in float64: float32 summation error
// only, at most ~(in / 32 + 20)·2⁻²⁴·Σ|terms| for the kernels' order (a lane sums in / 32 terms,
// then 16 lanes, bias and tail), taken as 2⁻²³·(in + 32) to leave room for the GEMM's order.
void check_product(const std::vector<uint16_t>& w, const std::vector<float>& x, const float* bias,
                   const std::vector<float>& y, int64_t rows, int64_t out, int64_t in) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < out; ++o) {
      double exact = bias ? bias[o] : 0.0, magnitude = bias ? std::fabs(bias[o]) : 0.0;
      for (int64_t i = 0; i < in; ++i) {
        const double term = static_cast<double>(bf16_bits_to_float(w[o * in + i])) * x[r * in + i];
        exact += term;
        magnitude += std::fabs(term);
      }
      INFO("rows " << rows << " out " << out << " in " << in << " at [" << r << ", " << o
                   << "] bias " << (bias != nullptr));
      CHECK(std::fabs(y[r * out + o] - exact) <=
            std::ldexp(1.0, -23) * static_cast<double>(in + 32) * magnitude + 1e-30);
    }
  }
}

const std::vector<std::pair<int64_t, int64_t>> kShapes{{1, 1},     {7, 5},    {8, 32},   {9, 33},
                                                       {17, 64},   {37, 95},  {64, 768}, {3, 4096},
                                                       {1001, 31}, {130, 100}};

}  // namespace

TEST_CASE("bf16 weights: round_to_bf16_bits is detail::round_to_bf16's rule", "[bf16][gemv]") {
  const float cases[] = {1.0f,
                         -2.5f,
                         1.0f + std::ldexp(1.0f, -8),      // a tie: down to the even 1.0
                         1.0f + 3 * std::ldexp(1.0f, -8),  // a tie: up to the even neighbour
                         1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20),  // above the tie
                         std::numeric_limits<float>::max(),  // rounds up to infinity
                         std::numeric_limits<float>::denorm_min(),
                         std::numeric_limits<float>::infinity(),
                         std::numeric_limits<float>::quiet_NaN()};
  for (float x : cases) {
    uint16_t bits = 0;
    round_to_bf16_bits(&x, &bits, 1);
    const float back = bf16_bits_to_float(bits);
    const float rule = detail::round_to_bf16(x);
    INFO("x " << x);
    if (std::isnan(x)) {
      CHECK(bits == 0x7fc0);
    } else {
      CHECK(std::bit_cast<uint32_t>(back) == std::bit_cast<uint32_t>(rule));
    }
  }
  CHECK(bf16_bits_to_float(0x3f80) == 1.0f);
  const float tie = 1.0f + std::ldexp(1.0f, -8);
  uint16_t bits = 0;
  round_to_bf16_bits(&tie, &bits, 1);
  CHECK(bits == 0x3f80);
}

TEST_CASE("bf16 weights: gemv_bf16 is the float64 product of the rounded weights", "[bf16][gemv]") {
  for (const auto& [out, in] : kShapes) {
    const auto w = to_bits(irregular_fill(static_cast<size_t>(out * in), 1));
    const auto x = irregular_fill(static_cast<size_t>(in), 2, 3.0f);
    const auto b = irregular_fill(static_cast<size_t>(out), 3);
    for (bool with_bias : {false, true}) {
      std::vector<float> y(static_cast<size_t>(out), -7.0f);
      gemv_bf16(w.data(), x.data(), with_bias ? b.data() : nullptr, y.data(), out, in);
      check_product(w, x, with_bias ? b.data() : nullptr, y, 1, out, in);
    }
  }
}

TEST_CASE("bf16 weights: linear_bf16 (many rows) is the float64 product of the rounded weights",
          "[bf16][gemv]") {
  for (const auto& [out, in] : kShapes) {
    for (int64_t rows : {2, 5, 64}) {
      const auto w = to_bits(irregular_fill(static_cast<size_t>(out * in), 4));
      const auto x = irregular_fill(static_cast<size_t>(rows * in), 5, 2.0f);
      const auto b = irregular_fill(static_cast<size_t>(out), 6);
      for (bool with_bias : {false, true}) {
        std::vector<float> y(static_cast<size_t>(rows * out), -7.0f);
        linear_bf16(w.data(), x.data(), with_bias ? b.data() : nullptr, y.data(), rows, out, in);
        check_product(w, x, with_bias ? b.data() : nullptr, y, rows, out, in);
      }
    }
  }
}

TEST_CASE("bf16 weights: the same bits at one and two threads", "[bf16][gemv][threads]") {
  const int64_t out = 50257 / 7, in = 768;  // enough work for parallel_for to split
  const auto w = to_bits(irregular_fill(static_cast<size_t>(out * in), 7));
  const auto x = irregular_fill(static_cast<size_t>(4 * in), 8);
  const auto b = irregular_fill(static_cast<size_t>(out), 9);
  const int before = num_threads();
  std::vector<float> y1(static_cast<size_t>(4 * out)), y2(y1.size());
  std::vector<float> z1(static_cast<size_t>(out)), z2(z1.size());
  set_num_threads(1);
  gemv_bf16(w.data(), x.data(), b.data(), z1.data(), out, in);
  linear_bf16(w.data(), x.data(), b.data(), y1.data(), 4, out, in);
  set_num_threads(2);
  gemv_bf16(w.data(), x.data(), b.data(), z2.data(), out, in);
  linear_bf16(w.data(), x.data(), b.data(), y2.data(), 4, out, in);
  set_num_threads(before);
  CHECK(std::ranges::equal(z1, z2, [](float a, float c) {
    return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(c);
  }));
  CHECK(std::ranges::equal(y1, y2, [](float a, float c) {
    return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(c);
  }));
}
