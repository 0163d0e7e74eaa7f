// tapegrad-gemv-bf16-bench: the matrix-vector products of one GPT-2 124M decode step (per layer
// four [768, 768], one [3072, 768] and one [768, 3072]; the head [50257, 768]) with float32
// weights (kernels/gemm/gemv.h), with bfloat16 weights widened to float32
// (kernels/gemm/linear_bf16.h), and, to choose that kernel by measurement, two alternatives written
// here: the same widening without the software prefetch, and AVX512_BF16's vdpbf16ps (x rounded to
// bfloat16 too). Prints the best of several passes over all products (one thread) and each kernel's
// largest error on the head against a float64 product of the bfloat16 weights. Not a test: figures
// only.
//
//   tapegrad-gemv-bf16-bench [passes]
#include <immintrin.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/gemm/gemv.h>
#include <tapegrad/kernels/gemm/linear_bf16.h>

namespace {

using namespace tapegrad;

// The widening kernel without the prefetch: eight rows, even and odd lanes (as linear_bf16.cpp).
void widened_no_prefetch(const uint16_t* w, const float* xs, float* y, int64_t out, int64_t in) {
  const __m512i high = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
  for (int64_t o = 0; o < out; o += 8) {
    __m512 even[8], odd[8];
    for (int r = 0; r < 8; ++r) even[r] = odd[r] = _mm512_setzero_ps();
    for (int64_t i = 0; i < in; i += 32) {
      const __m512 xe = _mm512_loadu_ps(xs + i), xo = _mm512_loadu_ps(xs + i + 16);
      for (int r = 0; r < 8; ++r) {
        const __m512i v = _mm512_loadu_si512(w + (o + r) * in + i);
        even[r] = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_slli_epi32(v, 16)), xe, even[r]);
        odd[r] = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_and_si512(v, high)), xo, odd[r]);
      }
    }
    for (int r = 0; r < 8; ++r) y[o + r] = _mm512_reduce_add_ps(_mm512_add_ps(even[r], odd[r]));
  }
}

#ifdef __AVX512BF16__
// vdpbf16ps: pairs of bfloat16 products summed into float32 lanes; x as bfloat16 bits.
void dot_bf16(const uint16_t* w, const uint16_t* xb, float* y, int64_t out, int64_t in) {
  for (int64_t o = 0; o < out; o += 8) {
    __m512 acc[8];
    for (int r = 0; r < 8; ++r) acc[r] = _mm512_setzero_ps();
    for (int64_t i = 0; i < in; i += 32) {
      const auto x = reinterpret_cast<__m512bh>(_mm512_loadu_si512(xb + i));
      for (int r = 0; r < 8; ++r) {
        const auto v = reinterpret_cast<__m512bh>(_mm512_loadu_si512(w + (o + r) * in + i));
        acc[r] = _mm512_dpbf16_ps(acc[r], v, x);
      }
    }
    for (int r = 0; r < 8; ++r) y[o + r] = _mm512_reduce_add_ps(acc[r]);
  }
}
#endif

struct Product {
  int64_t out, in;
  std::vector<float> w32;     // the bfloat16 weights' values, as float32
  std::vector<uint16_t> w16;  // their bits
};

}  // namespace

int main(int argc, char** argv) {
  const int passes = argc > 1 ? std::atoi(argv[1]) : 15;
  set_num_threads(1);
  std::vector<Product> products;
  for (int layer = 0; layer < 12; ++layer) {
    for (int k = 0; k < 4; ++k) products.push_back({768, 768, {}, {}});
    products.push_back({3072, 768, {}, {}});
    products.push_back({768, 3072, {}, {}});
  }
  products.push_back({50264, 768, {}, {}});  // the head, rounded up to a multiple of 8 rows
  std::mt19937 gen(1);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  double bytes32 = 0;
  for (Product& p : products) {
    std::vector<float> w(static_cast<size_t>(p.out * p.in));
    for (float& v : w) v = normal(gen);
    p.w16.resize(w.size());
    round_to_bf16_bits(w.data(), p.w16.data(), static_cast<int64_t>(w.size()));
    p.w32.resize(w.size());
    for (size_t i = 0; i < w.size(); ++i) p.w32[i] = bf16_bits_to_float(p.w16[i]);
    bytes32 += 4.0 * static_cast<double>(w.size());
  }
  std::vector<float> x(3072), xs(3072), y(50264);
  std::vector<uint16_t> xb(3072);
  for (float& v : x) v = 50.0f * normal(gen);  // activations of order 1
  for (int64_t i = 0; i < 3072; i += 32) {
    for (int64_t j = 0; j < 16; ++j) {
      xs[i + j] = x[i + 2 * j];
      xs[i + 16 + j] = x[i + 2 * j + 1];
    }
  }
  round_to_bf16_bits(x.data(), xb.data(), 3072);

  // The head's float64 reference.
  const Product& head = products.back();
  std::vector<double> exact(static_cast<size_t>(head.out));
  for (int64_t o = 0; o < head.out; ++o) {
    for (int64_t i = 0; i < head.in; ++i) exact[o] += double(head.w32[o * head.in + i]) * x[i];
  }
  const auto run = [&](const char* name, double bytes,
                       const std::function<void(const Product&)>& product) {
    double best = 1e30;
    for (int pass = 0; pass < passes; ++pass) {
      const auto t0 = std::chrono::steady_clock::now();
      for (const Product& p : products) product(p);
      best = std::min(best,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    product(head);
    double worst = 0;
    for (int64_t o = 0; o < head.out; ++o) worst = std::max(worst, std::fabs(y[o] - exact[o]));
    std::printf("%-44s %8.2f ms %7.1f GB/s   head max abs error %.3g\n", name, best * 1e3,
                bytes / best / 1e9, worst);
  };
  std::printf("GPT-2 124M decode step's products, 1 thread, best of %d passes:\n", passes);
  run("float32 weights (gemv)", bytes32,
      [&](const Product& p) { gemv(p.w32.data(), x.data(), nullptr, y.data(), p.out, p.in); });
  run("bf16 weights widened, prefetch (gemv_bf16)", bytes32 / 2,
      [&](const Product& p) { gemv_bf16(p.w16.data(), x.data(), nullptr, y.data(), p.out, p.in); });
  run("bf16 weights widened, no prefetch", bytes32 / 2, [&](const Product& p) {
    widened_no_prefetch(p.w16.data(), xs.data(), y.data(), p.out, p.in);
  });
#ifdef __AVX512BF16__
  run("bf16 weights and x, vdpbf16ps", bytes32 / 2,
      [&](const Product& p) { dot_bf16(p.w16.data(), xb.data(), y.data(), p.out, p.in); });
#endif
  return 0;
}
