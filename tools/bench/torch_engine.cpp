// The LibTorch comparator, built as a plugin the benchmark loads only in the processes that run
// it: the same step as tapegrad's (same init, same data, same ops), written as the book writes it.
#include <dlfcn.h>

#include <torch/torch.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "tools/bench/workload.h"

namespace {

// LibTorch's own setting covers its OpenMP pool; OpenBLAS (when it is the BLAS) has a pool of
// its own that would otherwise use every core. Looked up at run time: the reference BLAS has none.
void limit_blas_threads(int threads) {
  using SetThreads = void (*)(int);
  if (auto f = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
    f(threads);
  }
}

struct Engine {
  tgb_shape s{};
  torch::Tensor x, wq, wk, wv, wo, bo, mask;
  std::unique_ptr<torch::optim::SGD> sgd;
};

void scale_in_place(torch::Tensor& t, double factor) {
  // float32 values times the factor rounded to float32, as tapegrad's engine does it.
  const float f = static_cast<float>(factor);
  float* p = t.data_ptr<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] *= f;
}

double sum_of(const torch::Tensor& t) {
  const float* p = t.data_ptr<float>();
  double s = 0;
  for (int64_t i = 0; i < t.numel(); ++i) s += static_cast<double>(p[i]);
  return s;
}

}  // namespace

extern "C" {

void* tgb_torch_create(const tgb_shape* shape, int threads) {
  torch::set_num_threads(threads);
  limit_blas_threads(threads);
  auto e = std::make_unique<Engine>();
  e->s = *shape;
  const tgb_shape& s = e->s;
  torch::manual_seed(123);
  e->x = torch::rand({s.b, s.t, s.d_in});
  e->wq = torch::rand({s.d_in, s.d_out});
  e->wk = torch::rand({s.d_in, s.d_out});
  e->wv = torch::rand({s.d_in, s.d_out});
  e->wo = torch::rand({s.d_out, s.d_out});
  e->bo = torch::rand({s.d_out});
  if (s.scaled) {
    for (torch::Tensor* w : {&e->wq, &e->wk, &e->wv}) {
      scale_in_place(*w, 1.0 / std::sqrt(static_cast<double>(s.d_in)));
    }
    for (torch::Tensor* w : {&e->wo, &e->bo}) {
      scale_in_place(*w, 1.0 / std::sqrt(static_cast<double>(s.d_out)));
    }
  }
  for (torch::Tensor* w : {&e->wq, &e->wk, &e->wv, &e->wo, &e->bo}) w->requires_grad_(true);
  // The book's registered buffer: triu(ones(T, T), diagonal=1), as bool.
  e->mask = torch::triu(torch::ones({s.t, s.t}), 1).to(torch::kBool);
  e->sgd = std::make_unique<torch::optim::SGD>(
      std::vector<torch::Tensor>{e->wq, e->wk, e->wv, e->wo, e->bo},
      torch::optim::SGDOptions(1e-3));
  return e.release();
}

double tgb_torch_checksum(void* engine) {
  auto& e = *static_cast<Engine*>(engine);
  torch::NoGradGuard no_grad;
  return sum_of(e.x) + sum_of(e.wq) + sum_of(e.wk) + sum_of(e.wv) + sum_of(e.wo) + sum_of(e.bo);
}

double tgb_torch_step(void* engine) {
  auto& e = *static_cast<Engine*>(engine);
  const tgb_shape& s = e.s;
  const int64_t dh = s.d_out / s.heads;
  e.sgd->zero_grad();
  torch::Tensor q = e.x.matmul(e.wq).view({s.b, s.t, s.heads, dh}).transpose(1, 2);
  torch::Tensor k = e.x.matmul(e.wk).view({s.b, s.t, s.heads, dh}).transpose(1, 2);
  torch::Tensor v = e.x.matmul(e.wv).view({s.b, s.t, s.heads, dh}).transpose(1, 2);
  torch::Tensor scores = q.matmul(k.transpose(2, 3));
  scores.masked_fill_(e.mask, -std::numeric_limits<double>::infinity());
  torch::Tensor w = torch::softmax(scores / std::sqrt(static_cast<double>(dh)), -1);
  torch::Tensor ctx = w.matmul(v).transpose(1, 2).contiguous().view({s.b, s.t, s.d_out});
  torch::Tensor out = ctx.matmul(e.wo) + e.bo;
  torch::Tensor loss = (out * out).mean();
  loss.backward();
  e.sgd->step();
  return loss.item<double>();
}

void tgb_torch_destroy(void* engine) {
  delete static_cast<Engine*>(engine);
}

// GFLOP/s of torch::mm on n x n float32 matrices: the best of `reps` timed products.
double tgb_torch_gemm_gflops(int64_t n, int reps, int threads) {
  torch::set_num_threads(threads);
  limit_blas_threads(threads);
  torch::manual_seed(1);
  torch::Tensor a = torch::rand({n, n}), b = torch::rand({n, n}), c = torch::empty({n, n});
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    torch::mm_out(c, a, b);
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0 && sec < best) best = sec;  // the first is a warm-up
  }
  return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / best /
         1e9;
}

// "LibTorch 1.13.1, BLAS: OpenBLAS 0.3.21 ... (core Haswell)" or the reference BLAS.
const char* tgb_torch_info() {
  static std::string info;
  using Str = char* (*)();
  std::string blas = "the reference BLAS (no OpenBLAS loaded)";
  if (auto config = reinterpret_cast<Str>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) {
    blas = config();
    if (auto core = reinterpret_cast<Str>(dlsym(RTLD_DEFAULT, "openblas_get_corename"))) {
      blas += std::string(" (kernels: ") + core() + ")";
    }
  }
  info = std::string("LibTorch ") + TORCH_VERSION + ", BLAS: " + blas;
  return info.c_str();
}

}  // extern "C"
