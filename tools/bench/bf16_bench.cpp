// tapegrad-bf16-bench: the bf16 products' engines against float32 on the training products of
// GPT-2 124M and of gpt-tiny (forward, and the backward's two transposed products), to choose the
// engine by measurement: float32 (the current GEMM backend), bf16 on rounded operands through
// the float32 kernel, bf16 on oneDNN, bf16 on tapegrad's own kernel (kernels/gemm/gemm_dpbf16.cpp),
// and what MatmulPrecision::BFloat16 runs (auto). Prints the median milliseconds per product and
// GFLOP/s (each includes the rounding of its operands). Not a test: figures only. One thread
// unless given.
//
//   tapegrad-bf16-bench [repeats] [threads]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/gemm/gemm.h>
#include <tapegrad/kernels/gemm/gemm_kernels.h>
#include <tapegrad/kernels/gemm/matmul_precision.h>

namespace {

using namespace tapegrad;

constexpr int kEngines = 5;  // float32, bf16 rounded, oneDNN, tapegrad, auto

struct Product {
  const char* name;
  int64_t m, k, n;
  bool ta, tb;  // A or B a transposed view
};

double median_ms(const std::vector<double>& times) {
  std::vector<double> t = times;
  std::nth_element(t.begin(), t.begin() + static_cast<long>(t.size() / 2), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 9;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  set_num_threads(threads);
  // Forward Y = X·Wᵀ ([rows, in]·[in, out], W stored [out, in]); backward dX = dY·W and
  // dW = dYᵀ·X. GPT-2 124M (B·T = 256 rows), then gpt-tiny (1024 rows, width 64, vocabulary 256).
  struct Layer {
    const char* name;
    int64_t rows, in, out;
  };
  std::vector<Product> products;
  for (const Layer& l : {Layer{"qkv", 256, 768, 2304},
                         {"proj", 256, 768, 768},
                         {"fc", 256, 768, 3072},
                         {"fc_proj", 256, 3072, 768},
                         {"lm_head", 256, 768, 50257},
                         {"tiny qkv", 1024, 64, 192},
                         {"tiny proj", 1024, 64, 64},
                         {"tiny fc", 1024, 64, 256},
                         {"tiny fc_proj", 1024, 256, 64},
                         {"tiny lm_head", 1024, 64, 256}}) {
    products.push_back({l.name, l.rows, l.in, l.out, false, true});   // Y = X·Wᵀ
    products.push_back({l.name, l.rows, l.out, l.in, false, false});  // dX = dY·W
    products.push_back({l.name, l.out, l.rows, l.in, true, false});   // dW = dYᵀ·X
  }
  std::printf("tapegrad-bf16-bench: %d thread(s), median of %d; float32 on %s; bf16: %s\n", threads,
              repeats, gemm_backend_info(), bf16_engine_info());
  if (!bf16_supported()) {
    std::printf("this CPU has no AVX512_BF16: nothing to compare\n");
    return 0;
  }
  std::printf("%-12s %-22s %12s %12s %12s %12s %12s   (ms; GFLOP/s)\n", "layer", "product",
              "float32", "bf16 rounded", "bf16 oneDNN", "bf16 tapegrad", "bf16 auto");
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  double total[kEngines] = {};
  for (const Product& p : products) {
    std::vector<float> a(static_cast<size_t>(p.m * p.k)), b(static_cast<size_t>(p.k * p.n));
    std::vector<float> c(static_cast<size_t>(p.m * p.n));
    for (float& x : a) x = u(rng);
    for (float& x : b) x = u(rng);
    const MatrixView<const float> av = p.ta ? matrix<const float>(a.data(), p.k, p.m).t()
                                            : matrix<const float>(a.data(), p.m, p.k);
    const MatrixView<const float> bv = p.tb ? matrix<const float>(b.data(), p.n, p.k).t()
                                            : matrix<const float>(b.data(), p.k, p.n);
    const double gflop = 2e-9 * static_cast<double>(p.m * p.n * p.k);
    char label[64];
    std::snprintf(label, sizeof label, "[%ld,%ld]%s·[%ld,%ld]%s", static_cast<long>(p.m),
                  static_cast<long>(p.k), p.ta ? "ᵀ" : "", static_cast<long>(p.k),
                  static_cast<long>(p.n), p.tb ? "ᵀ" : "");
    std::printf("%-12s %-22s", p.name, label);
    for (int e = 0; e < kEngines; ++e) {
      if (e == 2 && !detail::dnnl_linked()) {
        std::printf(" %12s", "-");
        continue;
      }
      MatmulPrecisionGuard precision(e == 0 ? MatmulPrecision::Highest : MatmulPrecision::BFloat16);
      detail::set_bf16_engine_for_testing(e == 1   ? detail::Bf16Engine::Rounded
                                          : e == 2 ? detail::Bf16Engine::OneDNN
                                          : e == 3 ? detail::Bf16Engine::Tapegrad
                                                   : detail::Bf16Engine::Auto);
      std::vector<double> times;
      for (int i = 0; i < repeats + 1; ++i) {  // the first run warms up (packing, primitives)
        const auto t0 = std::chrono::steady_clock::now();
        gemm(matrix(c.data(), p.m, p.n), av, bv);
        const auto t1 = std::chrono::steady_clock::now();
        if (i > 0) times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
      const double ms = median_ms(times);
      total[e] += ms;
      std::printf(" %6.2f %5.0f", ms, gflop / ms * 1e3);
    }
    std::printf("\n");
  }
  detail::set_bf16_engine_for_testing(detail::Bf16Engine::Auto);
  std::printf("%-35s %12.1f %12.1f %12.1f %12.1f %12.1f   (ms, all products)\n", "total", total[0],
              total[1], total[2], total[3], total[4]);
  return 0;
}
