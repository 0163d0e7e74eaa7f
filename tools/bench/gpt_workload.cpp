// tapegrad-bench's GPT workloads: a whole training step of nn::GPTModel (forward,
// cross_entropy, backward, clip_grad_norm_, AdamW, exactly as a user calls them) against the
// book's GPTModel in LibTorch (the plugin, tools/bench/torch_engine.cpp) and in PyTorch eager
// (tools/bench/torch_gpt.py --serve), each peer run twice: with glibc's default malloc and with
// malloc told to keep its memory. Each engine is a process of its own, asked for one sample at a
// time in alternating order (bench.cpp's protocol), so a change of load on the machine hits every
// engine alike.
//
// The -bf16 variants: tapegrad's worker calls set_matmul_precision(BFloat16) and then runs the
// same step; its peers, interleaved with it, are PyTorch eager in float32, PyTorch eager with the
// forward and the loss under torch.autocast("cpu", bfloat16) (the backward outside, as torch
// users write it), and LibTorch in float32. Their GEMM peak is bf16 (1024³ through tapegrad's bf16
// products and torch's bf16 mm), measured in the same workers.
//
// Same start: manual_seed(123) gives torch's GPTModel weights bit for bit (tests/nn/
// test_gpt.cpp), the tokens come from torch.randint's rule on a Generator seeded 123
// (random() % V for a range under 2³²), and dropout draws torch's mask stream from the default
// generator after the init. The init checksum (Σ of every parameter) and the losses at the first
// and the last step show whether both really ran the same computation.
#include "tools/bench/gpt_workload.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/gemm/gemm.h>
#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/nn/gpt.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include <tapegrad/optim/adam.h>
#include <tapegrad/optim/clip.h>
#include "tools/bench/process_stats.h"
#include "tools/bench/worker_args.h"
#include "tools/bench/workload.h"
#include "tools/process/heap_counter.h"
#include "tools/process/worker_process.h"

namespace tapegrad_bench {

namespace {

// The shapes of torch_gpt.py's WORKLOADS. Warm-up samples are run and not timed: at gpt2-124m
// every engine's first three steps pay one-time costs (tapegrad's second step 2.1x its later
// ones, LibTorch's second and third 1.8x and 1.6x: first touches of the optimiser's moments,
// allocator growth), so the timed samples start at the fourth step.
const GptWorkload kGptWorkloads[] = {
    {"gpt-tiny", {256, 64, 64, 4, 2, 0.1, false}, 16, 64, 5, 2, 15, false},
    {"gpt2-124m", tapegrad::nn::GPT_CONFIG_124M, 4, 64, 1, 3, 5, false},
    {"gpt-tiny-bf16", {256, 64, 64, 4, 2, 0.1, false}, 16, 64, 5, 2, 15, true},
    {"gpt2-124m-bf16", tapegrad::nn::GPT_CONFIG_124M, 4, 64, 1, 3, 5, true},
    {"gpt-tiny-hvp", {256, 64, 64, 4, 2, 0.1, false}, 16, 64, 5, 2, 15, false, true},
};

// The float32 workload a -bf16 one is the variant of (its float32 peers run that one).
std::string float32_name(const GptWorkload& w) {
  const std::string name = w.name;
  return w.bf16 ? name.substr(0, name.size() - std::string("-bf16").size()) : name;
}

// The peers, in the order their checks and ratios are printed.
constexpr const char* kPeers[] = {"baseline", "LibTorch", "PyTorch", "PyTorch autocast"};

// AdamW's settings, the same for every engine (torch_gpt.py's defaults; betas and eps torch's).
constexpr double kLr = 4e-4, kWeightDecay = 0.1;

const GptWorkload& find_workload(const std::string& name) {
  for (const GptWorkload& w : kGptWorkloads) {
    if (name == w.name) return w;
  }
  std::fprintf(stderr, "tapegrad-bench: unknown GPT workload %s\n", name.c_str());
  std::exit(2);
}

// The exact FLOPs (2 per multiply-add) of the matrix products of one step, counted as the
// composed graph runs them (attention products dense, [T, T], as torch runs them). Forward per
// block: Q, K, V and out projections 4·2NC², feed-forward 2·2N·C·4C, scores and context
// 2·2B·T²·C; the head 2NCV. The backward computes both the input's and the weight's gradient of
// every product (the embeddings need the blocks' input gradients): twice the forward.
double gpt_step_flops(const GptWorkload& w) {
  if (w.hvp) return 0;  // a Hessian-vector product's products are not counted: rows show 0
  const double n = static_cast<double>(w.batch * w.t), c = static_cast<double>(w.cfg.emb_dim);
  const double t = static_cast<double>(w.t), b = static_cast<double>(w.batch);
  const double block = 8 * n * c * c + 16 * n * c * c + 4 * b * t * t * c;
  const double forward = static_cast<double>(w.cfg.n_layers) * block +
                         2 * n * c * static_cast<double>(w.cfg.vocab_size);
  return 3 * forward;
}

// The LibTorch worker: the plugin's GPT step (torch_engine.cpp), loaded only in this process.
int torch_worker(const GptWorkload& w, const std::string& plugin, int threads, int steps,
                 bool gemm_peak) {
  void* h = dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    std::fprintf(stderr, "tapegrad-bench: cannot load the LibTorch plugin: %s\n", dlerror());
    return 2;
  }
  auto sym = [&](const char* name) {
    void* f = dlsym(h, name);
    if (f == nullptr) {
      std::fprintf(stderr, "tapegrad-bench: the LibTorch plugin lacks %s\n", name);
      std::exit(2);
    }
    return f;
  };
  const auto create =
      reinterpret_cast<void* (*)(const tgb_gpt_config*, int)>(sym("tgb_torch_gpt_create"));
  const auto checksum = reinterpret_cast<double (*)(void*)>(sym("tgb_torch_gpt_checksum"));
  const auto step = reinterpret_cast<double (*)(void*)>(sym("tgb_torch_gpt_step"));
  const auto destroy = reinterpret_cast<void (*)(void*)>(sym("tgb_torch_gpt_destroy"));
  const auto gemm_gflops =
      reinterpret_cast<double (*)(int64_t, int, int)>(sym("tgb_torch_gemm_gflops"));
  const auto info = reinterpret_cast<const char* (*)()>(sym("tgb_torch_info"));

  // LibTorch runs float32 here; torch's bf16 mm (the same oneDNN) is measured by PyTorch's worker.
  const double gflops = gemm_peak ? gemm_gflops(1024, 6, threads) : 0.0;
  const tapegrad::nn::GPTConfig& c = w.cfg;
  const tgb_gpt_config cfg{c.vocab_size, c.context_length, c.emb_dim, c.n_heads, c.n_layers,
                           c.drop_rate,  c.qkv_bias,       w.batch,   w.t,       kLr,
                           kWeightDecay};
  void* engine = create(&cfg, threads);
  const char* malloc_kind = std::getenv("MALLOC_TOP_PAD_") != nullptr ? "tuned" : "default";
  const int rc = serve([&] { return step(engine); }, checksum(engine), gflops, 0.0,
                       std::string(info()) + "; " + malloc_kind + " malloc", steps);
  destroy(engine);
  return rc;
}

}  // namespace

// GFLOP/s of the library's own product on 1024³, best of 5: float32 or bf16 products.
double tapegrad_gemm_gflops(tapegrad::MatmulPrecision precision) {
  const tapegrad::MatmulPrecisionGuard guard(precision);
  const int64_t n = 1024;
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  double best = 1e30;
  for (int r = 0; r < 6; ++r) {
    const double t0 = now_seconds();
    tapegrad::gemm<float>(tapegrad::matrix(c.data(), n, n),
                          tapegrad::matrix(static_cast<const float*>(a.data()), n, n),
                          tapegrad::matrix(static_cast<const float*>(b.data()), n, n));
    if (r > 0) best = std::min(best, now_seconds() - t0);
  }
  return 2.0 * static_cast<double>(n * n * n) / best / 1e9;
}

namespace {

// "ready <checksum> <gemm GFLOP/s> <bf16 GEMM GFLOP/s> <info...>"; a --baseline build from
// before the bf16 figure writes no number there: its info starts at once.
void parse_ready(const std::string& line, Result& r) {
  std::istringstream ss(line);
  std::string word;
  ss >> word >> r.checksum >> r.gemm_gflops;
  std::getline(ss, r.info);
  if (!r.info.empty() && r.info[0] == ' ') r.info.erase(0, 1);
  char* end = nullptr;
  const double bf16 = std::strtod(r.info.c_str(), &end);
  if (end != r.info.c_str() && (*end == ' ' || *end == '\0')) {
    r.bf16_gemm_gflops = bf16;
    r.info.erase(0, static_cast<size_t>(end - r.info.c_str()));
    if (!r.info.empty() && r.info[0] == ' ') r.info.erase(0, 1);
  }
}

}  // namespace

const char* torch_gpt_script() {
  if (const char* env = std::getenv("TAPEGRAD_BENCH_TORCH_GPT")) return env;
#ifdef TAPEGRAD_BENCH_TORCH_GPT
  return TAPEGRAD_BENCH_TORCH_GPT;
#else
  return "tools/bench/torch_gpt.py";
#endif
}

// The worker's side of bench.cpp's protocol: "ready <checksum> <sgemm GFLOP/s> <info>", then
// for each "s" K steps, answered "<seconds> <first loss> <last loss> <allocations> <CPU
// seconds> <CPU seconds of the calling thread>", and for "q" the peak RSS (KiB).
int serve(const std::function<double()>& step, double checksum, double gemm_gflops,
          double bf16_gemm_gflops, const std::string& info, int steps) {
  std::printf("ready %.17g %.6g %.6g %s\n", checksum, gemm_gflops, bf16_gemm_gflops, info.c_str());
  return serve_steps(step, steps);
}

bool is_gpt_workload(const std::string& name) {
  return std::any_of(std::begin(kGptWorkloads), std::end(kGptWorkloads),
                     [&](const GptWorkload& w) { return name == w.name; });
}

int gpt_worker_main(const std::vector<std::string>& args) {
  using namespace tapegrad;
  const WorkerArgs a = parse_worker_args(args);
  const std::string &name = a.workload, &engine = a.engine, &plugin = a.plugin;
  const int threads = a.threads, steps = a.steps;
  const bool gemm_peak = a.gemm_peak;
  const GptWorkload& w = find_workload(name);
  if (engine == "torch-gpt") return torch_worker(w, plugin, threads, steps, gemm_peak);
  set_num_threads(threads);
  const double gemm_gflops = gemm_peak ? tapegrad_gemm_gflops() : 0.0;
  const double bf16_gemm_gflops =
      gemm_peak && w.bf16 ? tapegrad_gemm_gflops(MatmulPrecision::BFloat16) : 0.0;
  if (w.bf16) set_matmul_precision(MatmulPrecision::BFloat16);

  // What a user writes (torch_gpt.py's main, line for line).
  manual_seed(123);
  nn::GPTModel model(w.cfg);
  model.train();
  const std::vector<Parameter> params = model.parameters();
  AdamW optimizer(params, {.lr = kLr, .weight_decay = kWeightDecay});
  // torch.randint(0, V, (B, T + 1), generator=torch.Generator().manual_seed(123))
  Generator gen(123);
  const int64_t b = w.batch, t = w.t, v = w.cfg.vocab_size;
  std::vector<int64_t> tokens(static_cast<size_t>(b * (t + 1)));
  for (int64_t& id : tokens) id = static_cast<int64_t>(gen.random() % static_cast<uint64_t>(v));
  std::vector<int64_t> input_ids, targets;
  for (int64_t r = 0; r < b; ++r) {
    for (int64_t j = 0; j < t; ++j) {
      input_ids.push_back(tokens[r * (t + 1) + j]);
      targets.push_back(tokens[r * (t + 1) + j + 1]);
    }
  }
  const Ids inputs(Shape{b, t}, input_ids);
  Tape tape;
  // The HVP workload's vectors, one per parameter, fixed (torch_gpt.py draws its own).
  std::vector<std::vector<float>> vs;
  Generator v_gen(124);
  for (const Parameter& p : params) {
    vs.emplace_back(static_cast<size_t>(p.numel()));
    for (float& x : vs.back()) x = static_cast<float>(v_gen.random() % 2001) / 1000.0f - 1.0f;
  }
  auto hvp_step = [&] {
    tape.reset();
    TapeScope scope(tape);
    const Tensor logits = model(inputs);                                      // [B, T, V]
    const Tensor loss = cross_entropy(reshape(logits, {b * t, v}), targets);  // []
    const std::vector<Tensor> wrt(params.begin(), params.end());
    const std::vector<Tensor> g =
        grad(std::vector<Tensor>{loss}, wrt, {}, {.create_graph = true});  // ∂loss/∂θ
    Tensor dot;                                                            // Σ g·v
    for (size_t i = 0; i < g.size(); ++i) {
      const Tensor term = sum(mul(g[i], from_data(params[i].shape(), vs[i])));
      dot = dot.defined() ? dot + term : term;
    }
    grad(std::vector<Tensor>{dot}, wrt);  // H·v
    return loss.item();
  };
  auto step = [&] {
    if (w.hvp) return hvp_step();
    tape.reset();  // a fresh graph each step, its memory kept
    TapeScope scope(tape);
    optimizer.zero_grad();
    const Tensor logits = model(inputs);                                      // [B, T, V]
    const Tensor loss = cross_entropy(reshape(logits, {b * t, v}), targets);  // []
    loss.backward();
    clip_grad_norm_(params, 1.0);
    optimizer.step();
    return loss.item();
  };

  double checksum = 0;
  for (const Parameter& p : params) {
    for (int64_t i = 0; i < p.numel(); ++i) checksum += static_cast<double>(p.data<float>()[i]);
  }
  return serve(step, checksum, gemm_gflops, bf16_gemm_gflops,
               std::string("tapegrad (GEMM: ") + gemm_backend_info() + "; vmath: SLEEF " +
                   vmath::isa() + "; " + cpu_capability_info() +
                   (w.bf16 ? std::string("; bf16 products: ") + bf16_engine_info() : "") + ")",
               steps);
}

// Runs the engines of one group interleaved (alternating who goes first), returns their results.
std::vector<Result> run_group(const GptWorkload& w, const std::vector<Engine>& engines,
                              int samples) {
  std::vector<std::unique_ptr<tapegrad::process::WorkerProcess>> procs;
  std::vector<Result> r(engines.size());
  for (size_t e = 0; e < engines.size(); ++e) {
    procs.push_back(std::make_unique<tapegrad::process::WorkerProcess>(
        engines[e].argv[0], engines[e].argv, engines[e].env));
    parse_ready(procs[e]->receive(), r[e]);
    r[e].label = engines[e].label;
  }
  std::vector<unsigned long long> allocations(engines.size(), 0);
  for (int s = 0; s < w.warmup + samples; ++s) {
    for (size_t i = 0; i < procs.size(); ++i) {
      const size_t e = s % 2 == 0 ? i : procs.size() - 1 - i;  // alternate who goes first
      procs[e]->send("s\n");
      std::istringstream ss(procs[e]->receive());
      double seconds = 0, first = 0, last = 0, cpu = 0, thread_cpu = 0;
      long long allocs = 0;
      ss >> seconds >> first >> last >> allocs >> cpu >> thread_cpu;
      if (s == 0) r[e].loss_first = first;
      r[e].loss_last = last;
      if (s >= w.warmup) {
        r[e].ms.push_back(seconds * 1e3 / w.steps_per_sample);
        r[e].cpu_ms.push_back(cpu * 1e3 / w.steps_per_sample);
        r[e].main_cpu_ms.push_back(thread_cpu * 1e3 / w.steps_per_sample);
        if (allocs < 0) {
          r[e].allocations = -1;
        } else {
          allocations[e] += static_cast<unsigned long long>(allocs);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
  }
  for (size_t e = 0; e < procs.size(); ++e) {
    procs[e]->send("q\n");
    r[e].rss_kib = std::stol(procs[e]->receive());
    if (r[e].allocations >= 0) {
      r[e].allocations = static_cast<double>(allocations[e]) / (samples * w.steps_per_sample);
    }
  }
  return r;
}

Peaks print_engines(const std::vector<Result>& r) {
  Peaks peaks;
  for (const Result& x : r) {
    peaks.sgemm = std::max(peaks.sgemm, x.gemm_gflops);
    peaks.bf16 = std::max(peaks.bf16, x.bf16_gemm_gflops);
    std::printf("%-34s %s; sgemm %.1f GFLOP/s", x.label.c_str(), x.info.c_str(), x.gemm_gflops);
    if (x.bf16_gemm_gflops > 0) std::printf("; bf16 GEMM %.1f GFLOP/s", x.bf16_gemm_gflops);
    std::printf("\n");
  }
  std::printf("  -> GEMM peak measured: %.1f GFLOP/s (the best sgemm above)\n", peaks.sgemm);
  if (peaks.bf16 > 0) {
    std::printf("  -> bf16 GEMM peak measured: %.1f GFLOP/s (the best bf16 GEMM above)\n",
                peaks.bf16);
  }
  return peaks;
}

// Prints one group's rows; "x torch" and "RSS/tch" are against the group's fastest peer run.
void print_rows(const GptWorkload& w, const std::vector<Engine>& engines,
                const std::vector<Result>& r, const Peaks& peaks, double flops) {
  size_t best = 0;  // the fastest peer ("x torch"); the baseline is another tapegrad, no peer
  for (size_t e = 1; e < r.size(); ++e) {
    if (engines[e].peer == "baseline") continue;
    if (best == 0 || r[e].median() < r[best].median()) best = e;
  }
  if (best == 0) best = 1;
  // bf16 workloads: a "%bf16pk" column, the row's GFLOP/s over the bf16 GEMM peak.
  const bool bf16_column = w.bf16 && peaks.bf16 > 0;
  std::printf("%-9s %-34s %5s %10s %10s %10s %10s %10s %7s %5s%s %7s %7s %7s %8s %12s\n", "work",
              "engine", "steps", "median ms", "min ms", "max ms", "cpu ms", "main cpu", "GFLOP/s",
              "%peak", bf16_column ? " %bf16pk" : "", "x torch", "RSS MB", "RSS/tch", "allocs",
              "loss@1");
  for (size_t e = 0; e < r.size(); ++e) {
    const Result& x = r[e];
    const double gflops = flops / (x.median() * 1e-3) / 1e9;
    char allocs[32];
    if (x.allocations < 0) {
      std::snprintf(allocs, sizeof allocs, "n/a");
    } else {
      std::snprintf(allocs, sizeof allocs, "%.1f", x.allocations);
    }
    char bf16_peak[32] = "";
    if (bf16_column) {
      std::snprintf(bf16_peak, sizeof bf16_peak, " %7.1f", 100.0 * gflops / peaks.bf16);
    }
    std::printf(
        "%-9s %-34s %5d %10.2f %10.2f %10.2f %10.2f %10.2f %7.2f %5.1f%s %7.2f %7.1f %7.3f %8s "
        "%12.8g\n",
        w.name, x.label.c_str(), w.steps_per_sample, x.median(),
        *std::min_element(x.ms.begin(), x.ms.end()), *std::max_element(x.ms.begin(), x.ms.end()),
        Result::median_of(x.cpu_ms), Result::median_of(x.main_cpu_ms), gflops,
        100.0 * gflops / peaks.sgemm, bf16_peak, r[best].median() / x.median(), x.rss_kib / 1024.0,
        static_cast<double>(x.rss_kib) / static_cast<double>(r[best].rss_kib), allocs,
        x.loss_first);
  }
  // The losses' tolerance: float32 steps agree to rounding. With bf16 products tapegrad's
  // operands keep 8 significant bits and torch's autocast also rounds the products' outputs
  // and runs other ops in bf16, so its loss differs from tapegrad's (and from float32's) by far
  // more than float32 rounding while the step is still right; 1e-2 flags a wrong step (a
  // different model, batch or init), not the precision.
  const double loss_tolerance = w.bf16 ? 1e-2 : 1e-5;
  // Per peer (and baseline): same start (init checksum, loss at step 1) and the losses at the end.
  for (const char* peer : kPeers) {
    size_t t = 0;
    for (size_t e = 1; e < r.size(); ++e) {
      if (engines[e].peer == peer && (t == 0 || r[e].median() < r[t].median())) t = e;
    }
    if (t == 0) continue;
    const Result& g = r[0];
    const Result& p = r[t];
    const double init_rel = std::abs(g.checksum - p.checksum) / std::abs(p.checksum);
    const double rel1 = std::abs(g.loss_first - p.loss_first) / std::abs(p.loss_first);
    const double rel_last = std::abs(g.loss_last - p.loss_last) / std::abs(p.loss_last);
    std::printf(
        "%-9s check vs %s: init checksum %.12g vs %.12g (rel. diff %.1e, %s); loss@1 %.9g vs "
        "%.9g (rel. diff %.2e, %s%s); loss after %zu steps %.9g vs %.9g (rel. diff %.2e)\n",
        w.name, p.label.c_str(), g.checksum, p.checksum, init_rel,
        init_rel < 1e-9 ? "same init" : "DIFFERS", g.loss_first, p.loss_first, rel1,
        rel1 < loss_tolerance ? "OK" : "MISMATCH", w.bf16 ? " at bf16's tolerance 1e-2" : "",
        (w.warmup + p.ms.size()) * w.steps_per_sample, g.loss_last, p.loss_last, rel_last);
  }
}

namespace {

// Per peer: tapegrad's median over each of the peer's runs (text), and over the faster one (best,
// best_label), from the group they ran in, with tapegrad's peak RSS over that run's (best_rss).
struct Ratio {
  std::string peer, text;
  double best;
  std::string best_label;
  double best_rss;
};

// The targets of tapegrad's step with bf16 products (issue #28), each against the peer's faster
// run: at least 2x PyTorch eager and LibTorch in float32 and 1.3x PyTorch's autocast bf16, peak
// RSS at most 0.8 of PyTorch's (float32 and autocast alike), and the step's products at least
// 60% of the bf16 GEMM peak measured in the run (tapegrad's median over all its groups' samples).
void print_bf16_targets(const GptWorkload& w, const std::vector<Ratio>& ratios, double median_ms,
                        double bf16_peak) {
  const struct {
    const char* peer;
    const char* what;
    double target;
  } speed[] = {{"PyTorch", "PyTorch eager float32", 2.0},
               {"LibTorch", "LibTorch float32", 2.0},
               {"PyTorch autocast", "PyTorch eager bf16 autocast", 1.3}};
  std::string rss_text;
  double rss_worst = 0;
  for (const auto& t : speed) {
    for (const Ratio& q : ratios) {
      if (q.peer != t.peer) continue;
      const double speedup = 1.0 / q.best;
      std::printf("%-9s target vs %s (%s): speed-up %.3fx (target >= %.1f: %s)\n", w.name, t.what,
                  q.best_label.c_str(), speedup, t.target, speedup >= t.target ? "met" : "MISSED");
      if (q.peer == "LibTorch") continue;
      char text[160];
      std::snprintf(text, sizeof text, "%s%.3f of %s's (%s)", rss_text.empty() ? "" : ", ",
                    q.best_rss, t.what, q.best_label.c_str());
      rss_text += text;
      rss_worst = std::max(rss_worst, q.best_rss);
    }
  }
  if (!rss_text.empty()) {
    std::printf("%-9s target peak RSS: %s (target <= 0.8 of PyTorch's: %s)\n", w.name,
                rss_text.c_str(), rss_worst <= 0.8 ? "met" : "MISSED");
  }
  if (bf16_peak > 0) {
    const double gflops = gpt_step_flops(w) / (median_ms * 1e-3) / 1e9;
    const double share = 100.0 * gflops / bf16_peak;
    std::printf(
        "%-9s target products' share of the bf16 GEMM peak measured in this run: %.1f%% (%.2f of "
        "%.1f GFLOP/s; target >= 60%%: %s)\n",
        w.name, share, gflops, bf16_peak, share >= 60.0 ? "met" : "MISSED");
  } else {
    std::printf("%-9s target products' share of the bf16 GEMM peak: not measured\n", w.name);
  }
}

}  // namespace

int run_gpt_workloads(const std::vector<std::string>& names, const std::vector<int>& thread_counts,
                      double sample_factor, const char* torch_plugin, const std::string& baseline) {
  std::printf("GPT workloads: load average at start: %s\n", load_average().c_str());
  // Medians per (workload, engine, threads), for the thread-scaling lines at the end: wall time,
  // and CPU time (all threads at 1 thread, the step's own thread at more).
  struct Scaling {
    std::string workload, label;
    int threads;
    double wall, cpu, main_cpu;
  };
  std::vector<Scaling> scaling;
  for (int threads : thread_counts) {
    for (const std::string& name : names) {
      const GptWorkload& w = find_workload(name);
      const int samples = std::max(3, static_cast<int>(std::lround(w.samples * sample_factor)));
      const std::string k = std::to_string(w.steps_per_sample), n = std::to_string(threads);
      // A -bf16 workload's float32 peers run its float32 workload: the same model and batch.
      const std::string f32 = float32_name(w);
      const Engine tapegrad{"tapegrad",
                            "",
                            {"/proc/self/exe", "--worker", "tapegrad-gpt", "--workload", name,
                             "--threads", n, "--steps", k},
                            {}};
      // Each peer with the default malloc (any tuning in the environment removed) and tuned.
      std::vector<Engine> libtorch, pytorch, autocast;
      for (const bool tuned : {false, true}) {
        const std::string kind = tuned ? "tuned" : "default";
        // The threads of LibTorch's two pools (OpenMP's intra-op pool, OpenBLAS's) asleep soon
        // after their work instead of spinning against each other: with libgomp's default
        // spinning, 2 threads ran the GPT steps 10-20x slower than 1 on a loaded 2-core machine.
        // OPENBLAS_THREAD_TIMEOUT=4: OpenBLAS's threads wait 2^4 cycles, not 2^28, before
        // sleeping. torch_gpt.py sets the same.
        std::vector<std::string> env{"OMP_WAIT_POLICY=PASSIVE", "OPENBLAS_THREAD_TIMEOUT=4"};
        for (const auto& [var, value] : kMallocTuned) {
          env.push_back(std::string(var) + "=" + (tuned ? value : ""));
        }
        if (torch_plugin != nullptr && !w.hvp) {  // the LibTorch plugin runs training steps only
          libtorch.push_back({"libtorch/" + kind + "-malloc",
                              "LibTorch",
                              {"/proc/self/exe", "--worker", "torch-gpt", "--workload", f32,
                               "--threads", n, "--steps", k, "--plugin", torch_plugin},
                              env});
        }
        // torch_gpt.py sets its own environment (malloc, BLAS, threads) and re-executes itself.
        pytorch.push_back({"pytorch-eager/" + kind + "-malloc",
                           "PyTorch",
                           {"/usr/bin/python3", torch_gpt_script(), "--serve", "--workload", f32,
                            "--threads", n, "--steps", k, "--malloc", kind},
                           {}});
        if (w.bf16) {
          autocast.push_back({"pytorch-autocast/" + kind + "-malloc",
                              "PyTorch autocast",
                              {"/usr/bin/python3", torch_gpt_script(), "--serve", "--workload",
                               name, "--threads", n, "--steps", k, "--malloc", kind},
                              {}});
        }
      }
      // The other build's tapegrad worker, the same request (its argv[0] is its program).
      std::vector<Engine> others;
      if (!baseline.empty()) {
        others.push_back(tapegrad);
        others.back().label = others.back().peer = "baseline";
        others.back().argv[0] = baseline;
      }
      // All processes at once for gpt-tiny (five, seven for -bf16, one more with a baseline);
      // for gpt2-124m (3-4 GB each) tapegrad runs once with each peer's two runs, and once with
      // the baseline, so no more than three such processes are alive.
      std::vector<std::vector<Engine>> groups;
      const bool large = w.cfg.emb_dim * w.cfg.vocab_size > 10'000'000;
      if (large && !libtorch.empty()) {
        for (const std::vector<Engine>* peer : {&libtorch, &pytorch, &autocast}) {
          if (!peer->empty()) groups.push_back({tapegrad, (*peer)[0], (*peer)[1]});
        }
        if (!others.empty()) groups.push_back({tapegrad, others[0]});
      } else {
        std::vector<Engine> all{tapegrad};
        for (const std::vector<Engine>* peer : {&others, &libtorch, &pytorch, &autocast}) {
          all.insert(all.end(), peer->begin(), peer->end());
        }
        groups.push_back(all);
      }

      std::printf(
          "\n== %s, %d thread%s: batch %lld, T %lld, %.4g GFLOP per step (matrix products) "
          "==\n",
          w.name, threads, threads == 1 ? "" : "s", static_cast<long long>(w.batch),
          static_cast<long long>(w.t), gpt_step_flops(w) / 1e9);
      std::vector<Ratio> ratios;
      // For the bf16 targets: tapegrad's samples of every group, and the best bf16 GEMM of all.
      std::vector<double> tapegrad_ms;
      double bf16_peak = 0;
      for (size_t gi = 0; gi < groups.size(); ++gi) {
        const std::vector<Engine>& group = groups[gi];
        std::fflush(stdout);  // the table so far, before the progress line on stderr
        std::fprintf(stderr, "[%d thread%s] %s%s...\n", threads, threads == 1 ? "" : "s", w.name,
                     groups.size() > 1 ? (" group " + std::to_string(gi + 1)).c_str() : "");
        const std::vector<Result> r = run_group(w, group, samples);
        if (groups.size() > 1) {
          std::printf(
              "-- group %zu of %zu (these engines interleaved; the groups one after the "
              "other, so at most three 124M processes are alive):\n",
              gi + 1, groups.size());
        }
        const Peaks peaks = print_engines(r);
        print_rows(w, group, r, peaks, gpt_step_flops(w));
        tapegrad_ms.insert(tapegrad_ms.end(), r[0].ms.begin(), r[0].ms.end());
        bf16_peak = std::max(bf16_peak, peaks.bf16);
        for (const Result& x : r) {
          const bool seen = std::any_of(scaling.begin(), scaling.end(), [&](const Scaling& q) {
            return q.workload == w.name && q.label == x.label && q.threads == threads;
          });
          if (!seen) {
            scaling.push_back({w.name, x.label, threads, x.median(), Result::median_of(x.cpu_ms),
                               Result::median_of(x.main_cpu_ms)});
          }
        }
        for (const char* peer : kPeers) {
          Ratio q{peer, "", 0, "", 0};
          for (size_t e = 1; e < r.size(); ++e) {
            if (group[e].peer != peer) continue;
            const double ratio = r[0].median() / r[e].median();
            const double rss =
                static_cast<double>(r[0].rss_kib) / static_cast<double>(r[e].rss_kib);
            if (ratio > q.best) q = {peer, q.text, ratio, r[e].label, rss};  // the faster run
            char text[160];
            std::snprintf(text, sizeof text, " vs %s %.4f (%.3f)", r[e].label.c_str(), ratio, rss);
            q.text += text;
          }
          if (!q.text.empty()) ratios.push_back(q);
        }
      }
      // A higher ratio (tapegrad's time over the peer's) = a faster peer run; the targets hold
      // against the faster of the peers.
      // (The baseline is another tapegrad, not a peer: its line never marks the faster peer.)
      double best = 0;
      size_t peers = 0;
      for (const Ratio& q : ratios) {
        if (q.peer == "baseline") continue;
        best = std::max(best, q.best);
        ++peers;
      }
      for (const Ratio& q : ratios) {
        const bool faster = peers > 1 && q.peer != "baseline" && q.best == best;
        std::printf("%-9s ratio tapegrad/%s, median time (peak RSS):%s%s\n", w.name, q.peer.c_str(),
                    q.text.c_str(), faster ? " [the faster peer]" : "");
      }
      if (w.bf16) print_bf16_targets(w, ratios, Result::median_of(tapegrad_ms), bf16_peak);
      std::fflush(stdout);
    }
  }
  if (thread_counts.size() > 1) {
    std::printf(
        "\nGPT thread scaling (speed relative to 1 thread): by wall-time medians, and by CPU time "
        "(1-thread CPU / the step thread's CPU at n threads: the speed-up n idle cores would "
        "give, unless the step thread waits for the others)\n");
    for (const Scaling& q : scaling) {
      if (q.threads == 1) continue;
      for (const Scaling& one : scaling) {
        if (one.threads != 1 || one.workload != q.workload || one.label != q.label) continue;
        std::printf("  %-9s %-34s %d threads: %.2fx by wall, %.2fx by CPU\n", q.workload.c_str(),
                    q.label.c_str(), q.threads, one.wall / q.wall,
                    q.main_cpu > 0 ? one.cpu / q.main_cpu : 0.0);
      }
    }
  }
  std::printf("\nGPT workloads: load average at end: %s\n", load_average().c_str());
  return 0;
}

}  // namespace tapegrad_bench
