// tapegrad-bench's GPT workloads: a whole training step of nn::GPTModel (forward,
// cross_entropy, backward, clip_grad_norm_, AdamW, exactly as a user calls them) against the
// book's GPTModel in PyTorch eager (tools/bench/torch_gpt.py --serve), run twice: with glibc's
// default malloc and with malloc told to keep its memory. Each engine is a process of its own,
// asked for one sample at a time in alternating order (bench.cpp's protocol), so a change of load
// on the machine hits every engine alike.
//
// Same start: manual_seed(123) gives torch's GPTModel weights bit for bit (tests/ops/nn/
// test_gpt.cpp), the tokens come from torch.randint's rule on a Generator seeded 123
// (random() % V for a range under 2³²), and dropout draws torch's mask stream from the default
// generator after the init. The init checksum (Σ of every parameter) and the losses at the first
// and the last step show whether both really ran the same computation.
#include "tools/bench/gpt_workload.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "graph/ids.h"
#include "graph/random.h"
#include "graph/tape.h"
#include "graph/threads.h"
#include "ops/detail/gemm.h"
#include "ops/detail/vmath.h"
#include "ops/nn/gpt.h"
#include "ops/ops.h"
#include "optim/adam.h"
#include "optim/clip.h"
#include "tools/bench/process_stats.h"

// bench.cpp's count of heap allocations (its malloc interposition).
extern "C" unsigned long long tgb_allocations();

namespace tapegrad_bench {

namespace {

struct GptWorkload {
  const char* name;
  tapegrad::nn::GPTConfig cfg;
  int64_t batch, t;
  int steps_per_sample, warmup, samples;
};

// The shapes of torch_gpt.py's WORKLOADS.
const GptWorkload kGptWorkloads[] = {
    {"gpt-tiny", {256, 64, 64, 4, 2, 0.1, false}, 16, 64, 5, 2, 15},
    {"gpt2-124m", tapegrad::nn::GPT_CONFIG_124M, 4, 64, 1, 1, 5},
};

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
  const double n = static_cast<double>(w.batch * w.t), c = static_cast<double>(w.cfg.emb_dim);
  const double t = static_cast<double>(w.t), b = static_cast<double>(w.batch);
  const double block = 8 * n * c * c + 16 * n * c * c + 4 * b * t * t * c;
  const double forward = static_cast<double>(w.cfg.n_layers) * block +
                         2 * n * c * static_cast<double>(w.cfg.vocab_size);
  return 3 * forward;
}

// GFLOP/s of the library's own float32 product (its default backend) on 1024³: best of 5.
double tapegrad_gemm_gflops() {
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

// --- processes -------------------------------------------------------------------------------

// A child process (argv[0] is the program) talking one line each way over pipes.
class Process {
 public:
  explicit Process(const std::vector<std::string>& argv) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) std::exit(2);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      close(to_child[0]);
      close(to_child[1]);
      close(from_child[0]);
      close(from_child[1]);
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = fdopen(to_child[1], "w");
    out_ = fdopen(from_child[0], "r");
  }
  ~Process() {
    std::fclose(in_);
    std::fclose(out_);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  void send(const char* line) {
    std::fputs(line, in_);
    std::fflush(in_);
  }
  std::string receive() {
    char buffer[8192];
    if (std::fgets(buffer, sizeof buffer, out_) == nullptr) {
      std::fprintf(stderr, "tapegrad-bench: a GPT worker died (see above)\n");
      std::exit(2);
    }
    std::string s(buffer);
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }

 private:
  pid_t pid_ = -1;
  FILE* in_ = nullptr;
  FILE* out_ = nullptr;
};

struct Result {
  std::string label, info;
  double checksum = 0, gemm_gflops = 0;
  std::vector<double> ms, cpu_ms;  // per step, one per sample
  double loss_first = 0, loss_last = 0;
  double allocations = 0;  // per step; negative when not counted
  long rss_kib = 0;

  static double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
  }
  double median() const { return median_of(ms); }
};

// "ready <checksum> <gemm GFLOP/s> <info...>"
void parse_ready(const std::string& line, Result& r) {
  std::istringstream ss(line);
  std::string word;
  ss >> word >> r.checksum >> r.gemm_gflops;
  std::getline(ss, r.info);
  if (!r.info.empty() && r.info[0] == ' ') r.info.erase(0, 1);
}

const char* torch_gpt_script() {
  if (const char* env = std::getenv("TAPEGRAD_BENCH_TORCH_GPT")) return env;
#ifdef TAPEGRAD_BENCH_TORCH_GPT
  return TAPEGRAD_BENCH_TORCH_GPT;
#else
  return "tools/bench/torch_gpt.py";
#endif
}

}  // namespace

bool is_gpt_workload(const std::string& name) {
  return std::any_of(std::begin(kGptWorkloads), std::end(kGptWorkloads),
                     [&](const GptWorkload& w) { return name == w.name; });
}

int gpt_worker_main(const std::vector<std::string>& args) {
  using namespace tapegrad;
  std::string name;
  int threads = 1, steps = 1;
  bool gemm_peak = true;  // "--gemm-peak 0" skips it (for profiling the steps alone)
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i] == "--gemm-peak") gemm_peak = args[i + 1] != "0";
    if (args[i] == "--workload") name = args[i + 1];
    if (args[i] == "--threads") threads = std::stoi(args[i + 1]);
    if (args[i] == "--steps") steps = std::stoi(args[i + 1]);
  }
  const GptWorkload& w = find_workload(name);
  set_num_threads(threads);
  const double gemm_gflops = gemm_peak ? tapegrad_gemm_gflops() : 0.0;

  // What a user writes (torch_gpt.py's main, line for line).
  manual_seed(123);
  nn::GPTModel model(w.cfg);
  model.train();
  const std::vector<Parameter> params = model.parameters();
  AdamW optimizer(params, {.lr = 4e-4, .weight_decay = 0.1});
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
  auto step = [&] {
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
  std::printf("ready %.17g %.6g tapegrad (GEMM: %s; vmath: SLEEF %s)\n", checksum, gemm_gflops,
              gemm_backend_info(), vmath::isa());
  std::fflush(stdout);
  char command[16];
  while (std::fgets(command, sizeof command, stdin) != nullptr) {
    if (command[0] == 'q') {
      std::printf("%ld\n", peak_rss_kib());
      std::fflush(stdout);
      return 0;
    }
    const unsigned long long allocations_before = tgb_allocations();
    double first = 0, last = 0;
    const double cpu0 = cpu_seconds(), t0 = now_seconds();
    for (int i = 0; i < steps; ++i) {
      last = step();
      if (i == 0) first = last;
    }
    const double elapsed = now_seconds() - t0, cpu = cpu_seconds() - cpu0;
    std::printf("%.9g %.9g %.9g %llu %.9g\n", elapsed, first, last,
                tgb_allocations() - allocations_before, cpu);
    std::fflush(stdout);
  }
  return 0;
}

int run_gpt_workloads(const std::vector<std::string>& names, const std::vector<int>& thread_counts,
                      double sample_factor) {
  std::printf("GPT workloads: load average at start: %s\n", load_average().c_str());
  for (int threads : thread_counts) {
    for (const std::string& name : names) {
      const GptWorkload& w = find_workload(name);
      const int samples = std::max(3, static_cast<int>(std::lround(w.samples * sample_factor)));
      const std::string k = std::to_string(w.steps_per_sample), n = std::to_string(threads);
      std::vector<std::vector<std::string>> argvs{{"/proc/self/exe", "--worker", "tapegrad-gpt",
                                                   "--workload", name, "--threads", n, "--steps",
                                                   k}};
      std::vector<std::string> labels{"tapegrad"};
      for (const char* malloc_kind : {"default", "tuned"}) {
        argvs.push_back({"/usr/bin/python3", torch_gpt_script(), "--serve", "--workload", name,
                         "--threads", n, "--steps", k, "--malloc", malloc_kind});
        labels.push_back(std::string("pytorch-eager/") + malloc_kind + "-malloc");
      }
      std::fprintf(stderr, "[%d thread%s] %s...\n", threads, threads == 1 ? "" : "s", w.name);
      std::vector<std::unique_ptr<Process>> procs;
      std::vector<Result> r(argvs.size());
      for (size_t e = 0; e < argvs.size(); ++e) {
        procs.push_back(std::make_unique<Process>(argvs[e]));
        parse_ready(procs[e]->receive(), r[e]);
        r[e].label = labels[e];
      }
      std::vector<unsigned long long> allocations(argvs.size(), 0);
      for (int s = 0; s < w.warmup + samples; ++s) {
        for (size_t i = 0; i < procs.size(); ++i) {
          const size_t e = s % 2 == 0 ? i : procs.size() - 1 - i;  // alternate who goes first
          procs[e]->send("s\n");
          std::istringstream ss(procs[e]->receive());
          double seconds = 0, first = 0, last = 0, cpu = 0;
          long long allocs = 0;
          ss >> seconds >> first >> last >> allocs >> cpu;
          if (s == 0) r[e].loss_first = first;
          r[e].loss_last = last;
          if (s >= w.warmup) {
            r[e].ms.push_back(seconds * 1e3 / w.steps_per_sample);
            r[e].cpu_ms.push_back(cpu * 1e3 / w.steps_per_sample);
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
      procs.clear();

      const double flops = gpt_step_flops(w);
      double peak = 0;
      for (const Result& x : r) peak = std::max(peak, x.gemm_gflops);
      std::printf(
          "\n== %s, %d thread%s: batch %lld, T %lld, %.4g GFLOP per step (matrix products)"
          " ==\n",
          w.name, threads, threads == 1 ? "" : "s", static_cast<long long>(w.batch),
          static_cast<long long>(w.t), flops / 1e9);
      for (const Result& x : r) {
        std::printf("%-34s %s; sgemm %.1f GFLOP/s\n", x.label.c_str(), x.info.c_str(),
                    x.gemm_gflops);
      }
      std::printf("  -> GEMM peak measured: %.1f GFLOP/s (the best sgemm above)\n", peak);
      // The faster of the two PyTorch runs is the one every ratio is against.
      const size_t best = r[1].median() <= r[2].median() ? 1 : 2;
      std::printf("%-9s %-34s %5s %10s %10s %10s %10s %7s %5s %7s %7s %7s %8s %12s\n", "work",
                  "engine", "steps", "median ms", "min ms", "max ms", "cpu ms", "GFLOP/s", "%peak",
                  "x torch", "RSS MB", "RSS/tch", "allocs", "loss@1");
      for (const Result& x : r) {
        const double gflops = flops / (x.median() * 1e-3) / 1e9;
        char allocs[32];
        if (x.allocations < 0) {
          std::snprintf(allocs, sizeof allocs, "n/a");
        } else {
          std::snprintf(allocs, sizeof allocs, "%.1f", x.allocations);
        }
        std::printf(
            "%-9s %-34s %5d %10.2f %10.2f %10.2f %10.2f %7.2f %5.1f %7.2f %7.1f %7.3f %8s "
            "%12.8g\n",
            w.name, x.label.c_str(), w.steps_per_sample, x.median(),
            *std::min_element(x.ms.begin(), x.ms.end()),
            *std::max_element(x.ms.begin(), x.ms.end()), Result::median_of(x.cpu_ms), gflops,
            100.0 * gflops / peak, r[best].median() / x.median(), x.rss_kib / 1024.0,
            static_cast<double>(x.rss_kib) / static_cast<double>(r[best].rss_kib), allocs,
            x.loss_first);
      }
      const Result& g = r[0];
      const Result& t = r[best];
      const double init_rel = std::abs(g.checksum - t.checksum) / std::abs(t.checksum);
      const double rel1 = std::abs(g.loss_first - t.loss_first) / std::abs(t.loss_first);
      const double rel_last = std::abs(g.loss_last - t.loss_last) / std::abs(t.loss_last);
      std::printf(
          "%-9s check: init checksum %.12g vs %.12g (rel. diff %.1e, %s); loss@1 %.9g vs %.9g "
          "(rel. diff %.2e, %s); loss after %d steps %.9g vs %.9g (rel. diff %.2e)\n",
          w.name, g.checksum, t.checksum, init_rel, init_rel < 1e-9 ? "same init" : "DIFFERS",
          g.loss_first, t.loss_first, rel1, rel1 < 1e-5 ? "OK" : "MISMATCH",
          (w.warmup + samples) * w.steps_per_sample, g.loss_last, t.loss_last, rel_last);
      std::printf("%-9s ratio tapegrad/PyTorch, median time (peak RSS):", w.name);
      for (size_t e = 1; e < r.size(); ++e) {
        std::printf(" vs %s %.4f (%.3f)%s", r[e].label.c_str(), g.median() / r[e].median(),
                    static_cast<double>(g.rss_kib) / static_cast<double>(r[e].rss_kib),
                    e == best ? " [the faster]" : "");
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  std::printf("\nGPT workloads: load average at end: %s\n", load_average().c_str());
  return 0;
}

}  // namespace tapegrad_bench
