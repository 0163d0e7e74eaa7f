// tapegrad-bench's convolution workloads, each against LibTorch (the plugin, tools/bench/
// torch_engine.cpp; in NCHW as a user writes it and in channels_last, torch's advice for CNNs on
// the CPU) and PyTorch eager (tools/bench/torch_cnn.py), each peer with the default and the tuned
// malloc, each engine a process of its own, interleaved as the GPT workloads run theirs
// (gpt_workload.cpp's run_group):
//   conv2d-resnet: nn::Conv2d(64, 64, 3, padding 1) on x [8, 64, 56, 56] that needs its gradient
//     (a layer inside a network): forward, mean, backward (dx, dw, db). No optimiser: the layer.
//   cnn-step: examples/cnn.cpp's CNN (Conv2d(1, 16, 3, padding 1), ReLU, MaxPool2d(2),
//     Conv2d(16, 32, 3, padding 1), ReLU, MaxPool2d(2), Flatten, Linear(1568, 10)), one training
//     step on a fixed batch of 32 images 1×28×28: zero_grad, forward, cross_entropy, backward,
//     SGD(lr 0.01, momentum 0.9).
// Same start: manual_seed(123) before the layers (torch's init from the same seed), the inputs
// torch.rand from a Generator seeded 123 (the labels torch.randint from it next); the init
// checksum and the loss at step 1 are checked against the peers'.
#include "tools/bench/cnn_workload.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/gemm/gemm.h>
#include <tapegrad/nn/activations.h>
#include <tapegrad/nn/conv.h>
#include <tapegrad/nn/layers.h>
#include <tapegrad/nn/module.h>
#include <tapegrad/nn/pooling.h>
#include <tapegrad/ops/ops.h>
#include <tapegrad/optim/sgd.h>
#include "tools/bench/gpt_workload.h"
#include "tools/bench/process_stats.h"
#include "tools/bench/worker_args.h"

namespace tapegrad_bench {

namespace {

struct CnnWorkload {
  GptWorkload w;  // name, steps per sample, warm-up and timed samples (cfg, batch, t unused)
  double target;  // the speed-up against LibTorch the issue asks for
  double flops;   // of one step's convolution and matrix products (2 per multiply-add)
};

// conv2d-resnet: forward, dw and dx, each 2·N·C_out·C_in·9·H·W.
constexpr double kResnetFlops = 3 * 2.0 * 8 * 64 * 64 * 9 * 56 * 56;
// cnn-step: conv1 forward and dw (its input needs no gradient), conv2 forward, dw and dx, the
// Linear's forward, dw and dx.
constexpr double kCnnFlops = 2 * 2.0 * 32 * 16 * 1 * 9 * 28 * 28 +
                             3 * 2.0 * 32 * 32 * 16 * 9 * 14 * 14 + 3 * 2.0 * 32 * 1568 * 10;

const CnnWorkload kCnnWorkloads[] = {
    {{"conv2d-resnet", {}, 8, 0, 1, 2, 9, false}, 1.0, kResnetFlops},
    {{"cnn-step", {}, 32, 0, 20, 2, 11, false}, 1.2, kCnnFlops},
};

const CnnWorkload* find_workload(const std::string& name) {
  for (const CnnWorkload& c : kCnnWorkloads) {
    if (name == c.w.name) return &c;
  }
  return nullptr;
}

// A constant input outside any tape: torch.rand(shape, generator=gen).
tapegrad::Parameter rand_input(const tapegrad::Shape& shape, tapegrad::Generator& gen,
                               bool requires_grad) {
  using namespace tapegrad;
  Parameter p(shape);
  {
    Tape tape;
    TapeScope scope(tape);
    const Tensor r = rand(shape, DType::Float32, gen);
    std::copy_n(r.data<float>(), r.numel(), p.data<float>());
  }
  p.set_requires_grad(requires_grad);
  return p;
}

double sum_of(const std::vector<tapegrad::Parameter>& params) {
  double s = 0;
  for (const tapegrad::Parameter& p : params) {
    for (int64_t i = 0; i < p.numel(); ++i) s += static_cast<double>(p.data<float>()[i]);
  }
  return s;
}

// examples/cnn.cpp's model.
tapegrad::nn::Sequential make_cnn() {
  using namespace tapegrad;
  return nn::Sequential(
      {std::make_shared<nn::Conv2d>(1, 16, 3, 1, 1), std::make_shared<nn::ReLU>(),
       std::make_shared<nn::MaxPool2d>(2), std::make_shared<nn::Conv2d>(16, 32, 3, 1, 1),
       std::make_shared<nn::ReLU>(), std::make_shared<nn::MaxPool2d>(2),
       std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(32 * 7 * 7, 10)});
}

// The PyTorch-eager peer's script (TAPEGRAD_BENCH_TORCH_CNN overrides the built-in path).
const char* torch_cnn_script() {
  if (const char* env = std::getenv("TAPEGRAD_BENCH_TORCH_CNN")) return env;
#ifdef TAPEGRAD_BENCH_TORCH_CNN
  return TAPEGRAD_BENCH_TORCH_CNN;
#else
  return "tools/bench/torch_cnn.py";
#endif
}

// The LibTorch worker: the plugin's convolution step (torch_engine.cpp's CnnEngine), loaded only
// in this process so that no other engine's time or RSS includes LibTorch.
int torch_cnn_worker(const std::string& name, const std::string& plugin, bool channels_last,
                     int threads, int steps, bool gemm_peak) {
  void* h = dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    std::fprintf(stderr, "tapegrad-bench: cannot load the LibTorch plugin: %s\n", dlerror());
    return 2;
  }
  auto sym = [&](const char* symbol) {
    void* f = dlsym(h, symbol);
    if (f == nullptr) {
      std::fprintf(stderr, "tapegrad-bench: the LibTorch plugin lacks %s\n", symbol);
      std::exit(2);
    }
    return f;
  };
  const auto create =
      reinterpret_cast<void* (*)(const char*, int, int)>(sym("tgb_torch_cnn_create"));
  const auto checksum = reinterpret_cast<double (*)(void*)>(sym("tgb_torch_cnn_checksum"));
  const auto step = reinterpret_cast<double (*)(void*)>(sym("tgb_torch_cnn_step"));
  const auto destroy = reinterpret_cast<void (*)(void*)>(sym("tgb_torch_cnn_destroy"));
  const auto gemm_gflops =
      reinterpret_cast<double (*)(int64_t, int, int)>(sym("tgb_torch_gemm_gflops"));
  const auto info = reinterpret_cast<const char* (*)()>(sym("tgb_torch_info"));
  const double gflops = gemm_peak ? gemm_gflops(1024, 6, threads) : 0.0;
  void* engine = create(name.c_str(), channels_last ? 1 : 0, threads);
  const char* malloc_kind = std::getenv("MALLOC_TOP_PAD_") != nullptr ? "tuned" : "default";
  const int rc = serve([&] { return step(engine); }, checksum(engine), gflops, 0.0,
                       std::string(info()) + (channels_last ? "; channels_last; " : "; NCHW; ") +
                           malloc_kind + " malloc",
                       steps);
  destroy(engine);
  return rc;
}

}  // namespace

bool is_cnn_workload(const std::string& name) {
  return find_workload(name) != nullptr;
}

int cnn_worker_main(const std::vector<std::string>& args) {
  using namespace tapegrad;
  const WorkerArgs a = parse_worker_args(args);
  const std::string &name = a.workload, &engine = a.engine;
  const int threads = a.threads, steps = a.steps;
  const bool gemm_peak = a.gemm_peak;
  const CnnWorkload* c = find_workload(name);
  if (c == nullptr) {
    std::fprintf(stderr, "tapegrad-bench: unknown convolution workload %s\n", name.c_str());
    return 2;
  }
  if (engine == "torch-cnn") {
    return torch_cnn_worker(name, a.plugin, a.channels_last, threads, steps, gemm_peak);
  }
  set_num_threads(threads);
  const double gemm_gflops = gemm_peak ? tapegrad_gemm_gflops() : 0.0;
  const std::string info =
      std::string("tapegrad (GEMM: ") + gemm_backend_info() + "; " + cpu_capability_info() + ")";
  Tape tape;
  if (c->w.name == std::string("conv2d-resnet")) {
    manual_seed(123);
    nn::Conv2d conv(64, 64, 3, 1, 1);
    Generator gen(123);
    Parameter x = rand_input({8, 64, 56, 56}, gen, true);
    auto step = [&] {
      tape.reset();  // a fresh graph each step, its memory kept
      TapeScope scope(tape);
      x.zero_grad();
      conv.weight.zero_grad();
      conv.bias.zero_grad();
      const Tensor loss = mean(conv(x));
      loss.backward();
      return loss.item();
    };
    std::vector<Parameter> all = conv.parameters();
    all.push_back(x);
    return serve(step, sum_of(all), gemm_gflops, 0.0, info, steps);
  }
  manual_seed(123);
  nn::Sequential model = make_cnn();
  Generator gen(123);
  const Parameter images = rand_input({32, 1, 28, 28}, gen, false);
  const Ids labels = randint(0, 10, {32}, gen);
  SGD optimizer(model.parameters(), {.lr = 0.01, .momentum = 0.9});
  auto step = [&] {
    tape.reset();
    TapeScope scope(tape);
    optimizer.zero_grad();
    const Tensor loss = cross_entropy(model(images), labels);
    loss.backward();
    optimizer.step();
    return loss.item();
  };
  std::vector<Parameter> all = model.parameters();
  all.push_back(images);
  return serve(step, sum_of(all), gemm_gflops, 0.0, info, steps);
}

int run_cnn_workloads(const std::vector<std::string>& names, const std::vector<int>& thread_counts,
                      double sample_factor, const char* torch_plugin) {
  std::printf("Convolution workloads: load average at start: %s\n", load_average().c_str());
  for (int threads : thread_counts) {
    for (const std::string& name : names) {
      const CnnWorkload& c = *find_workload(name);
      const GptWorkload& w = c.w;
      const int samples = std::max(3, static_cast<int>(std::lround(w.samples * sample_factor)));
      const std::string k = std::to_string(w.steps_per_sample), n = std::to_string(threads);
      std::vector<Engine> engines{{"tapegrad",
                                   "",
                                   {"/proc/self/exe", "--worker", "tapegrad-cnn", "--workload",
                                    name, "--threads", n, "--steps", k},
                                   {}}};
      // LibTorch as the GPT workloads run it (gpt_workload.cpp: the pools' threads asleep soon
      // after their work; malloc's thresholds removed or set), in NCHW and in channels_last.
      for (const bool tuned : {false, true}) {
        if (torch_plugin == nullptr) break;
        const std::string kind = tuned ? "tuned" : "default";
        std::vector<std::string> env{"OMP_WAIT_POLICY=PASSIVE", "OPENBLAS_THREAD_TIMEOUT=4"};
        for (const auto& [var, value] : kMallocTuned) {
          env.push_back(std::string(var) + "=" + (tuned ? value : ""));
        }
        for (const bool channels_last : {false, true}) {
          engines.push_back(
              {std::string("libtorch/") + (channels_last ? "nhwc/" : "nchw/") + kind + "-malloc",
               "LibTorch",
               {"/proc/self/exe", "--worker", "torch-cnn", "--workload", name, "--threads", n,
                "--steps", k, "--plugin", torch_plugin, "--channels-last",
                channels_last ? "1" : "0"},
               env});
        }
      }
      // torch_cnn.py sets its own environment (OpenBLAS, malloc, threads) and re-executes itself.
      for (const char* kind : {"default", "tuned"}) {
        engines.push_back({std::string("pytorch-eager/") + kind + "-malloc",
                           "PyTorch",
                           {"/usr/bin/python3", torch_cnn_script(), "--serve", "--workload", name,
                            "--threads", n, "--steps", k, "--malloc", kind},
                           {}});
      }
      std::printf(
          "\n== %s, %d thread%s: batch %lld, %.4g GFLOP per step (convolutions and "
          "products) ==\n",
          w.name, threads, threads == 1 ? "" : "s", static_cast<long long>(w.batch), c.flops / 1e9);
      std::fflush(stdout);  // the table so far, before the progress line on stderr
      std::fprintf(stderr, "[%d thread%s] %s...\n", threads, threads == 1 ? "" : "s", w.name);
      const std::vector<Result> r = run_group(w, engines, samples);
      const Peaks peaks = print_engines(r);
      print_rows(w, engines, r, peaks, c.flops);
      // The target is against LibTorch's fastest run (PyTorch eager's when LibTorch is not built).
      const std::string peer = torch_plugin != nullptr ? "LibTorch" : "PyTorch";
      size_t best = 0;
      for (size_t e = 1; e < r.size(); ++e) {
        if (engines[e].peer == peer && (best == 0 || r[e].median() < r[best].median())) best = e;
      }
      const double speedup = r[best].median() / r[0].median();
      const double rss = static_cast<double>(r[0].rss_kib) / static_cast<double>(r[best].rss_kib);
      std::printf(
          "%-9s target vs %s: speed-up %.3fx (target >= %.1f: %s); peak RSS %.1f MB, "
          "%.3f of its\n",
          w.name, r[best].label.c_str(), speedup, c.target, speedup >= c.target ? "met" : "MISSED",
          r[0].rss_kib / 1024.0, rss);
      std::fflush(stdout);
    }
  }
  std::printf("\nConvolution workloads: load average at end: %s\n", load_average().c_str());
  return 0;
}

}  // namespace tapegrad_bench
