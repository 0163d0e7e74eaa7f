// tapegrad-bench: times the attention training step of tapegrad against LibTorch's, interleaved in
// one run, with the machine's measured GEMM peak and each engine's peak memory. The step is what
// a user runs: the book's MultiHeadAttention module (nn::MultiHeadAttention; LibTorch's the book's
// module in torch::nn) in training mode, mean(out²), backward, SGD; one row per dropout setting,
// since the module's attention runs another kernel with dropout drawn than without.
//
// Every engine runs in a worker process of its own (this program, re-executed), so each gets its
// own peak RSS and LibTorch's libraries are never loaded into tapegrad's process. The parent
// only steers: it asks the two workers for one sample at a time, alternating which goes first,
// so a change of load on the machine hits both engines alike. A sample is K consecutive steps
// (K fixed per workload, the same for both engines) timed together.
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <tapegrad/graph/threads.h>
#ifndef TAPEGRAD_BENCH_COMPOSED_ONLY
#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/gemm/gemm.h>
#endif
#ifndef TAPEGRAD_BENCH_COMPOSED_ONLY
#include "tools/bench/cnn_workload.h"
#include "tools/bench/finetune_workload.h"
#include "tools/bench/generate_workload.h"
#include "tools/bench/gpt_workload.h"
#include "tools/bench/op_workload.h"
#include "tools/bench/qwen3_step_workload.h"
#endif
#include <tapegrad/cli/cli.h>
#include "tools/bench/process_stats.h"
#include "tools/bench/tapegrad_engine.h"
#include "tools/bench/workload.h"
#include "tools/process/heap_counter.h"
#include "tools/process/worker_process.h"

namespace tgb = tapegrad_bench;
using tgb::cpu_seconds;
using tgb::load_average;
using tgb::now_seconds;
using tgb::peak_rss_kib;

namespace {

// --- small utilities -------------------------------------------------------------------------

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "tapegrad-bench: %s\n", what.c_str());
  std::exit(2);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

// --- the LibTorch plugin ---------------------------------------------------------------------

struct TorchPlugin {
  void* (*create)(const tgb_shape*, int) = nullptr;
  double (*checksum)(void*) = nullptr;
  double (*step)(void*) = nullptr;
  void (*destroy)(void*) = nullptr;
  double (*gemm_gflops)(int64_t, int, int) = nullptr;
  const char* (*info)() = nullptr;
};

const char* plugin_path() {
#ifdef TAPEGRAD_BENCH_TORCH_PLUGIN
  if (const char* env = std::getenv("TAPEGRAD_BENCH_TORCH_PLUGIN")) return env;
  return TAPEGRAD_BENCH_TORCH_PLUGIN;
#else
  return nullptr;
#endif
}

TorchPlugin load_torch() {
  const char* path = plugin_path();
  if (path == nullptr) die("built without LibTorch");
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) die(std::string("cannot load the LibTorch plugin: ") + dlerror());
  TorchPlugin p;
  auto sym = [&](const char* name) {
    void* s = dlsym(h, name);
    if (s == nullptr) die(std::string("the LibTorch plugin lacks ") + name);
    return s;
  };
  p.create = reinterpret_cast<decltype(p.create)>(sym("tgb_torch_create"));
  p.checksum = reinterpret_cast<decltype(p.checksum)>(sym("tgb_torch_checksum"));
  p.step = reinterpret_cast<decltype(p.step)>(sym("tgb_torch_step"));
  p.destroy = reinterpret_cast<decltype(p.destroy)>(sym("tgb_torch_destroy"));
  p.gemm_gflops = reinterpret_cast<decltype(p.gemm_gflops)>(sym("tgb_torch_gemm_gflops"));
  p.info = reinterpret_cast<decltype(p.info)>(sym("tgb_torch_info"));
  return p;
}

// --- workers -----------------------------------------------------------------------------------
// Protocol on stdin/stdout, one line each way:
//   worker -> "ready <init checksum> <info...>"
//   "s" -> "<seconds for K steps> <loss of the first of them> <loss of the last> <allocations>"
//   "q" -> "<peak RSS KiB>", then the worker exits.

struct StepFns {
  std::function<double()> step;
  std::function<double()> checksum;
  std::string info;
};

int run_step_worker(const StepFns& fns, int steps) {
  std::printf("ready %.17g %s\n", fns.checksum(), fns.info.c_str());
  return tgb::serve_steps(fns.step, steps);
}

// GFLOP/s of Eigen's float32 product on n x n matrices, split over `threads` row blocks the way
// tapegrad splits its products: the best of `reps` (after one warm-up).
double eigen_gemm_gflops(int64_t n, int reps, int threads) {
  tapegrad::set_num_threads(threads);
  using M = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  M a = M::Random(n, n), b = M::Random(n, n), c(n, n);
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_seconds();
    tapegrad::parallel_for(n, 2.0 * static_cast<double>(n * n), [&](int, int64_t r0, int64_t r1) {
      c.middleRows(r0, r1 - r0).noalias() = a.middleRows(r0, r1 - r0) * b;
    });
    const double sec = now_seconds() - t0;
    if (r > 0) best = std::min(best, sec);
  }
  return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / best /
         1e9;
}

int worker_main(const std::vector<std::string>& args) {
  std::string engine;
  tgb_shape shape{};
  int threads = 1, steps = 1;
  int64_t n = 1024;
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    const std::string& key = args[i];
    const std::string& value = args[i + 1];
    if (key == "--worker") {
      engine = value;
    } else if (key == "--shape") {
      const std::vector<std::string> v = split(value, ',');
      if (v.size() != 6) die("--shape wants b,t,d_in,d_out,heads,scaled");
      const double dropout = shape.dropout;  // --dropout may come first
      shape = {std::stoll(v[0]), std::stoll(v[1]), std::stoll(v[2]), std::stoll(v[3]),
               std::stoll(v[4]), std::stoi(v[5]),  dropout};
    } else if (key == "--threads") {
      threads = std::stoi(value);
    } else if (key == "--steps") {
      steps = std::stoi(value);
    } else if (key == "--dropout") {
      shape.dropout = std::stod(value);
    } else if (key == "--n") {
      n = std::stoll(value);
    }
  }
#ifndef TAPEGRAD_BENCH_COMPOSED_ONLY
  if (engine == "tapegrad-gpt" || engine == "torch-gpt") return tgb::gpt_worker_main(args);
  if (engine == "tapegrad-finetune") return tgb::finetune_worker_main(args);
  if (engine == "tapegrad-qwen3-step") return tgb::qwen3_step_worker_main(args);
  if (engine == "tapegrad-cnn" || engine == "torch-cnn") return tgb::cnn_worker_main(args);
  if (engine == "tapegrad-ops" || engine == "torch-ops") return tgb::op_worker_main(args);
#endif
  if (engine == "tapegrad-generate" || engine == "read-bandwidth") {
    return tgb::generate_worker_main(args);
  }
  if (engine == "tapegrad") {
    tgb::TapegradEngine e(shape, threads);
    std::string info = "tapegrad, nn::MultiHeadAttention";
#ifndef TAPEGRAD_BENCH_COMPOSED_ONLY
    info += std::string(", GEMM: ") + tapegrad::gemm_backend_info() + ", " +
            tapegrad::cpu_capability_info();
#endif
    StepFns fns{[&] { return e.step(); }, [&] { return e.checksum(); }, info};
    return run_step_worker(fns, steps);
  }
  if (engine == "torch") {
    const TorchPlugin t = load_torch();
    void* handle = t.create(&shape, threads);
    StepFns fns{[&] { return t.step(handle); }, [&] { return t.checksum(handle); }, t.info()};
    const int rc = run_step_worker(fns, steps);
    t.destroy(handle);
    return rc;
  }
  if (engine == "gemm-eigen") {
    std::printf("%.6g\n", eigen_gemm_gflops(n, 6, threads));
    return 0;
  }
  if (engine == "gemm-torch") {
    const TorchPlugin t = load_torch();
    std::printf("%.6g %s\n", t.gemm_gflops(n, 6, threads), t.info());
    return 0;
  }
  die("unknown --worker " + engine);
}

// --- the parent ----------------------------------------------------------------------------------

// This program (or `exe`, another build of it, when args[0] is "--exe=PATH") as a worker;
// "--env=NAME=VALUE" arguments next are set in the worker's environment only.
std::unique_ptr<tapegrad::process::WorkerProcess> start_worker(std::vector<std::string> args) {
  std::string exe = "/proc/self/exe";
  if (!args.empty() && args[0].rfind("--exe=", 0) == 0) {
    exe = args[0].substr(6);
    args.erase(args.begin());
  }
  std::vector<std::string> env;
  while (!args.empty() && args[0].rfind("--env=", 0) == 0) {
    env.push_back(args[0].substr(6));
    args.erase(args.begin());
  }
  args.insert(args.begin(), "tapegrad-bench");
  return std::make_unique<tapegrad::process::WorkerProcess>(exe, args, env);
}

struct Plan {
  int steps_per_sample;
  int warmup;
  int samples;
};

Plan plan_for(const tgb::Workload& w, double sample_factor) {
  Plan p{1, 2, 15};
  if (std::string(w.name) == "book") p = {1000, 2, 15};
  if (std::string(w.name) == "small") p = {20, 2, 15};
  p.samples = std::max(3, static_cast<int>(std::lround(p.samples * sample_factor)));
  return p;
}

struct EngineResult {
  std::string info;
  double checksum = 0;
  std::vector<double> us_per_step;      // wall time, one per sample
  std::vector<double> cpu_us_per_step;  // CPU time of all the engine's threads, one per sample
  double loss_first = 0, loss_last = 0;
  double allocations_per_step = 0;  // over the timed samples
  long peak_rss_kib = 0;
  bool ran = false;

  double median() const { return median_of(us_per_step); }
  static double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
  }
  double min() const { return *std::min_element(us_per_step.begin(), us_per_step.end()); }
  double max() const { return *std::max_element(us_per_step.begin(), us_per_step.end()); }
};

std::vector<std::string> step_worker_args(const char* engine, const tgb::Workload& w, int threads,
                                          int steps, double dropout) {
  return {"--worker",
          engine,
          "--shape",
          std::to_string(w.b) + "," + std::to_string(w.t) + "," + std::to_string(w.d_in) + "," +
              std::to_string(w.d_out) + "," + std::to_string(w.heads) + "," +
              std::to_string(w.scaled ? 1 : 0),
          "--threads",
          std::to_string(threads),
          "--steps",
          std::to_string(steps),
          "--dropout",
          std::to_string(dropout)};
}

void parse_ready(const std::string& line, EngineResult& r) {
  std::istringstream ss(line);
  std::string word;
  ss >> word >> r.checksum;
  std::getline(ss, r.info);
  if (!r.info.empty() && r.info[0] == ' ') r.info.erase(0, 1);
}

// Runs the workload on the engines given, interleaved, and fills one result per engine.
std::vector<EngineResult> run_workload(const Plan& plan,
                                       const std::vector<std::vector<std::string>>& engines) {
  std::vector<std::unique_ptr<tapegrad::process::WorkerProcess>> workers;
  std::vector<EngineResult> results(engines.size());
  for (size_t e = 0; e < engines.size(); ++e) {
    workers.push_back(start_worker(engines[e]));
    parse_ready(workers[e]->receive(), results[e]);
    results[e].ran = true;
  }
  std::vector<uint64_t> allocations(engines.size(), 0);
  const int total = plan.warmup + plan.samples;
  for (int s = 0; s < total; ++s) {
    for (size_t i = 0; i < engines.size(); ++i) {
      // Alternate which engine goes first.
      const size_t e = (s % 2 == 0) ? i : engines.size() - 1 - i;
      workers[e]->send("s\n");
      std::istringstream ss(workers[e]->receive());
      double seconds = 0, first = 0, last = 0;
      unsigned long long allocs = 0;
      double cpu = 0;
      ss >> seconds >> first >> last >> allocs >> cpu;
      if (s == 0) results[e].loss_first = first;
      results[e].loss_last = last;
      if (s >= plan.warmup) {
        results[e].us_per_step.push_back(seconds * 1e6 / plan.steps_per_sample);
        results[e].cpu_us_per_step.push_back(cpu * 1e6 / plan.steps_per_sample);
        allocations[e] += allocs;
      }
      // Let the other engine's pool threads stop spinning before the next sample.
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
  }
  for (size_t e = 0; e < engines.size(); ++e) {
    workers[e]->send("q\n");
    results[e].peak_rss_kib = std::stol(workers[e]->receive());
    results[e].allocations_per_step =
        static_cast<double>(allocations[e]) / (plan.samples * plan.steps_per_sample);
  }
  return results;
}

double run_gemm_worker(const char* engine, int threads, int64_t n, std::string* info,
                       const std::string& env = "") {
  std::vector<std::string> args{"--worker", engine,           "--threads", std::to_string(threads),
                                "--n",      std::to_string(n)};
  if (!env.empty()) args.insert(args.begin(), "--env=" + env);
  const auto worker = start_worker(args);
  std::istringstream ss(worker->receive());
  double gflops = 0;
  ss >> gflops;
  if (info != nullptr) {
    std::getline(ss, *info);
    if (!info->empty() && (*info)[0] == ' ') info->erase(0, 1);
  }
  return gflops;
}

// The float32 GEMM rates measured on this machine: tapegrad's kernel (Eigen), LibTorch's mm as
// the comparator runs it (OpenBLAS), and, when the comparator's OpenBLAS kernels are forced by
// OPENBLAS_CORETYPE on an AVX-512 CPU, OpenBLAS's AVX-512 kernels: the machine's peak is the best
// of them all, not just of the engines compared.
struct Peaks {
  double eigen = 0, torch = 0, openblas_avx512 = 0;
  double best() const { return std::max({eigen, torch, openblas_avx512}); }
};

bool cpu_has_avx512() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("flags", 0) == 0) return line.find(" avx512f") != std::string::npos;
  }
  return false;
}

Peaks measure_peaks(int threads, int64_t n, bool torch, std::string* torch_info) {
  Peaks p;
  p.eigen = run_gemm_worker("gemm-eigen", threads, n, nullptr);
  if (torch) {
    p.torch = run_gemm_worker("gemm-torch", threads, n, torch_info);
    if (std::getenv("OPENBLAS_CORETYPE") != nullptr && cpu_has_avx512()) {
      // The comparator runs forced kernels: measure OpenBLAS's AVX-512 ones too, for the peak.
      p.openblas_avx512 =
          run_gemm_worker("gemm-torch", threads, n, nullptr, "OPENBLAS_CORETYPE=SkylakeX");
    }
  }
  return p;
}

// --- CPU levels
// ------------------------------------------------------------------------------------
// --cpu-level L limits every engine to one instruction-set level through its own variables, set
// in this process and so inherited by every worker: tapegrad's kernels (TAPEGRAD_CPU_CAPABILITY),
// ATen's vectorised kernels (ATEN_CPU_CAPABILITY), OpenBLAS's kernels, tapegrad's and the peers'
// (OPENBLAS_CORETYPE) and oneDNN's (DNNL_MAX_CPU_ISA). avx512_bf16, the highest level, limits
// nothing: each engine picks its kernels for the CPU, as without the option.

struct LevelSettings {
  const char* level;
  const char* aten;      // ATEN_CPU_CAPABILITY (nullptr: unset)
  const char* openblas;  // OPENBLAS_CORETYPE (nullptr: unset)
  const char* dnnl;      // DNNL_MAX_CPU_ISA (nullptr: unset)
};

constexpr LevelSettings kLevels[] = {
    {"baseline", "default", "Prescott", "SSE41"},
    {"avx2", "avx2", "Haswell", "AVX2"},
    {"avx512", "avx512", "SkylakeX", "AVX512_CORE"},
    {"avx512_bf16", nullptr, nullptr, nullptr},
};

const LevelSettings& level_settings(const std::string& level) {
  for (const LevelSettings& l : kLevels) {
    if (level == l.level) return l;
  }
  die("--cpu-level " + level + ": expected baseline, avx2, avx512 or avx512_bf16");
}

// The levels this CPU runs, lowest first (the ones tapegrad's kernels detect).
std::vector<std::string> cpu_levels() {
  std::vector<std::string> out;
#ifndef TAPEGRAD_BENCH_COMPOSED_ONLY
  const int top = static_cast<int>(tapegrad::cpu_detected_capability());
  for (int l = 0; l <= top; ++l) {
    out.push_back(tapegrad::cpu_capability_name(static_cast<tapegrad::CpuCapability>(l)));
  }
#else
  out.push_back("baseline");
  if (cpu_has_avx512()) out.insert(out.end(), {"avx2", "avx512"});
#endif
  return out;
}

// Sets the level's variables in this process (so in every worker), and returns one line saying
// what each engine runs at.
std::string apply_cpu_level(const std::string& level) {
  const LevelSettings& l = level_settings(level);
  const std::vector<std::string> have = cpu_levels();
  if (std::find(have.begin(), have.end(), level) == have.end()) {
    die("--cpu-level " + level + ": above this CPU's level, " + have.back());
  }
  std::string line = "CPU level " + level + ": tapegrad TAPEGRAD_CPU_CAPABILITY=" + level;
  setenv("TAPEGRAD_CPU_CAPABILITY", level.c_str(), 1);
  const std::pair<const char*, const char*> vars[] = {{"ATEN_CPU_CAPABILITY", l.aten},
                                                      {"OPENBLAS_CORETYPE", l.openblas},
                                                      {"DNNL_MAX_CPU_ISA", l.dnnl}};
  std::string peers;
  for (const auto& [name, value] : vars) {
    if (value != nullptr) {
      setenv(name, value, 1);
      peers += std::string(peers.empty() ? "" : ", ") + name + "=" + value;
    } else {
      unsetenv(name);
    }
  }
  line += peers.empty() ? "; the peers and OpenBLAS at their own choice for this CPU"
                        : "; OpenBLAS (tapegrad's and the peers') and the peers: " + peers;
  return line;
}

// --levels: this program again once per level (lowest first), with --cpu-level instead; the
// other arguments unchanged. Returns the first failing run's status, or 0.
int run_levels(std::vector<std::string> levels, int argc, char** argv) {
  const std::vector<std::string> have = cpu_levels();
  if (levels.size() == 1 && levels[0] == "all") levels = have;
  for (const std::string& level : levels) {
    level_settings(level);  // dies on an unknown name
    if (std::find(have.begin(), have.end(), level) == have.end()) {
      die("--levels " + level + ": above this CPU's level, " + have.back());
    }
  }
  std::vector<std::string> rest;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--levels") {
      ++i;
    } else if (a.rfind("--levels=", 0) != 0) {
      rest.push_back(a);
    }
  }
  int status = 0;
  for (const std::string& level : levels) {
    std::vector<std::string> args{"tapegrad-bench"};
    args.insert(args.end(), rest.begin(), rest.end());
    args.insert(args.end(), {"--cpu-level", level});
    std::vector<char*> cargs;
    for (std::string& a : args) cargs.push_back(a.data());
    cargs.push_back(nullptr);
    std::fflush(stdout);
    pid_t pid = 0;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, cargs.data(), environ) != 0) {
      die("cannot run itself for --levels");
    }
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    const int rc = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 1;
    if (rc != 0 && status == 0) status = rc;
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "--worker") return worker_main(args);

  std::vector<int> thread_counts{1};
  std::vector<std::string> workload_names{"book", "small", "gpt2"};
  std::vector<double> dropouts{0.0, 0.1};
  double sample_factor = 1.0;
  bool torch = plugin_path() != nullptr;
  std::string baseline;
  bool keep_openblas_env = false, no_torch = false;
  std::string cpu_level;
  std::vector<std::string> levels;
  std::vector<std::string> workload_list;
  for (const tgb::Workload& c : tgb::kWorkloads) workload_list.push_back(c.name);
  // The GPT and fine-tuning workloads, each with its -bf16 variant.
  for (const char* name : {"gpt-tiny", "gpt2-124m", "finetune-124m", "lora-124m", "full-124m"}) {
    workload_list.push_back(name);
    workload_list.push_back(std::string(name) + "-bf16");
  }
  workload_list.push_back("gpt-tiny-hvp");  // a Hessian-vector product (grad, create_graph)
  // A Qwen3 0.6B training step (qwen3_step_workload.cpp), float32 and with bf16 products.
  for (const char* name : {"qwen3-0.6b-step", "qwen3-0.6b-step-bf16"}) {
    workload_list.push_back(name);
  }
  for (const char* name : {"generate-124m", "generate-124m-bf16", "generate-355m",
                           "generate-qwen3-0.6b", "generate-qwen3-0.6b-bf16"}) {
    workload_list.push_back(name);
  }
  for (const char* name : {"conv2d-resnet", "cnn-step"}) workload_list.push_back(name);
#ifndef TAPEGRAD_BENCH_COMPOSED_ONLY
  workload_list.push_back("ops");  // the op table (op_workload.cpp)
#endif
  std::vector<std::string> op_rows;

  CLI::App app(
      "Times training steps in tapegrad and its peers, interleaved: the attention workloads "
      "(book, small, gpt2: one training step of the book's MultiHeadAttention module, forward, "
      "mean(out^2), backward, SGD, per dropout setting) "
      "against LibTorch when built with it; the GPT workloads (gpt-tiny, gpt2-124m: GPTModel, "
      "cross_entropy, clip_grad_norm_, AdamW) against LibTorch and PyTorch eager, and their -bf16 "
      "variants (set_matmul_precision(BFloat16)) against both in float32 and PyTorch's "
      "autocast bf16; gpt-tiny-hvp, a Hessian-vector product of gpt-tiny's loss w.r.t. every "
      "parameter (grad with create_graph, then grad of the dot product with v), against PyTorch "
      "eager; qwen3-0.6b-step and -bf16 (an AdamW step of Qwen3 0.6B on 2 x 256 tokens) against "
      "the book's Qwen3Model in PyTorch eager (and autocast), one engine after the other; "
      "conv2d-resnet (a 64->64 3x3 conv2d's forward and backward on 8x64x56x56) and "
      "cnn-step (examples/cnn.cpp's training step) against LibTorch and PyTorch eager; ops, the "
      "op table (each elementwise op, reduction and gather/scatter op forward + backward on "
      "[1024, 1024] float32, the binary ones also broadcast against [1024, 1]) against LibTorch.",
      "tapegrad-bench");
  app.add_option("--threads", thread_counts, "thread counts, N[,N...]")
      ->delimiter(',')
      ->capture_default_str()
      ->check(tapegrad::cli::positive());
  app.add_option("--workloads", workload_names, "workloads, W[,W...]")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::IsMember(workload_list));
  app.add_option("--dropout", dropouts,
                 "the attention workloads' dropout settings, P[,P...] (0: the kernel eval and "
                 "p = 0 run; > 0: the one training with dropout runs)")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.99));
  app.add_option("--samples-factor", sample_factor, "scales the number of samples")
      ->capture_default_str()
      ->check(tapegrad::cli::positive_finite());
  app.add_flag("--no-torch", no_torch, "leave the LibTorch comparator out");
  app.add_option("--baseline", baseline,
                 "EXE: another build of tapegrad-bench (e.g. of an older commit, built by "
                 "tools/bench/build_baseline.sh) run interleaved with the others, labelled "
                 "baseline: in the attention workloads (dropout 0 only) and, with its tapegrad, "
                 "in the GPT workloads");
  CLI::Option* op_rows_option =
      app.add_option("--op-rows", op_rows, "the ops workload's rows, R[,R...] (default: all)")
          ->delimiter(',');
#ifndef TAPEGRAD_BENCH_COMPOSED_ONLY
  op_rows_option->check(CLI::IsMember(tgb::op_row_names()));
#endif
  app.add_flag("--keep-openblas-env", keep_openblas_env,
               "keep OPENBLAS_CORETYPE from the environment (default: removed)");
  std::vector<std::string> level_names;
  for (const LevelSettings& l : kLevels) level_names.push_back(l.level);
  CLI::Option* cpu_level_option =
      app.add_option("--cpu-level", cpu_level,
                     "L: every engine at that CPU level (baseline, avx2, avx512, avx512_bf16; "
                     "not above this CPU's): tapegrad by TAPEGRAD_CPU_CAPABILITY, PyTorch and "
                     "LibTorch by ATEN_CPU_CAPABILITY and DNNL_MAX_CPU_ISA, OpenBLAS (theirs and "
                     "tapegrad's) by OPENBLAS_CORETYPE; avx512_bf16 limits none of them")
          ->check(CLI::IsMember(level_names));
  std::vector<std::string> levels_allowed = level_names;
  levels_allowed.push_back("all");
  app.add_option("--levels", levels,
                 "L[,L...] or all (every level this CPU has): the whole run once per level, "
                 "lowest first, as --cpu-level L")
      ->delimiter(',')
      ->check(CLI::IsMember(levels_allowed))
      ->excludes(cpu_level_option);
  if (const std::optional<int> exit_code = tapegrad::cli::parse(app, argc, argv)) {
    return *exit_code;
  }
  if (no_torch) torch = false;
  if (!levels.empty()) {
    if (std::find(levels.begin(), levels.end(), "all") != levels.end() && levels.size() > 1) {
      die("--levels: all, or a list of levels, not both");
    }
    return run_levels(levels, argc, argv);
  }
  std::string level_line;
  if (!cpu_level.empty()) {
    level_line = apply_cpu_level(cpu_level);
    keep_openblas_env = true;  // the level's, just set
  }

  // OpenBLAS picks its kernels for the CPU unless OPENBLAS_CORETYPE forces some (this
  // machine's environment may set it, e.g. to Haswell's AVX2 kernels on an AVX-512 CPU): the
  // comparison is against OpenBLAS at its best here, unless told to keep the setting.
  std::string removed_coretype;
  if (!keep_openblas_env) {
    if (const char* c = std::getenv("OPENBLAS_CORETYPE")) {
      removed_coretype = c;
      unsetenv("OPENBLAS_CORETYPE");
    }
  }
  std::printf("tapegrad-bench on %s, %u cores; load average at start: %s\n", cpu_model().c_str(),
              std::thread::hardware_concurrency(), load_average().c_str());
  std::printf("Eigen %d.%d.%d, SIMD: %s\n", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
              EIGEN_MINOR_VERSION, Eigen::SimdInstructionSetsInUse());
#ifndef TAPEGRAD_BENCH_COMPOSED_ONLY
  // The tapegrad workers run the library's default backend, as a user does; each reports it
  // below (with OpenBLAS's kernels, which it picks in the worker, after OPENBLAS_CORETYPE).
  std::printf(
      "tapegrad GEMM: the library's default, %s\n",
      tapegrad::gemm_backend_available(tapegrad::GemmBackend::OpenBLAS) ? "OpenBLAS" : "Eigen");
#endif
  if (!torch) std::printf("LibTorch comparator: not built or disabled (--no-torch)\n");
  if (!level_line.empty()) std::printf("%s\n", level_line.c_str());
  if (!removed_coretype.empty()) {
    std::printf(
        "OPENBLAS_CORETYPE=%s was set in the environment: removed, so OpenBLAS picks its "
        "kernels for this CPU (--keep-openblas-env keeps it)\n",
        removed_coretype.c_str());
  }

#ifndef TAPEGRAD_BENCH_COMPOSED_ONLY
  // The GPT workloads (gpt-tiny, gpt2-124m, their -bf16 variants) run on their own, with the
  // LibTorch and PyTorch peers.
  std::vector<std::string> gpt_names;
  std::erase_if(workload_names, [&](const std::string& n) {
    if (!tgb::is_gpt_workload(n)) return false;
    gpt_names.push_back(n);
    return true;
  });
  if (!gpt_names.empty()) {
    // --baseline EXE: the GPT workloads run the other build's tapegrad too.
    tgb::run_gpt_workloads(gpt_names, thread_counts, sample_factor, torch ? plugin_path() : nullptr,
                           baseline);
  }
  // The fine-tuning workloads (finetune-124m, lora-124m, full-124m), with PyTorch eager as peer.
  std::vector<std::string> finetune_names;
  std::erase_if(workload_names, [&](const std::string& n) {
    if (!tgb::is_finetune_workload(n)) return false;
    finetune_names.push_back(n);
    return true;
  });
  if (!finetune_names.empty()) {
    tgb::run_finetune_workloads(finetune_names, thread_counts, sample_factor);
  }
  // The Qwen3 0.6B training step, with PyTorch eager as peer, the engines one after the other.
  std::vector<std::string> qwen3_step_names;
  std::erase_if(workload_names, [&](const std::string& n) {
    if (!tgb::is_qwen3_step_workload(n)) return false;
    qwen3_step_names.push_back(n);
    return true;
  });
  if (!qwen3_step_names.empty()) {
    tgb::run_qwen3_step_workloads(qwen3_step_names, thread_counts, sample_factor);
  }
  // The convolution workloads (conv2d-resnet, cnn-step), with LibTorch and PyTorch eager as peers.
  std::vector<std::string> cnn_names;
  std::erase_if(workload_names, [&](const std::string& n) {
    if (!tgb::is_cnn_workload(n)) return false;
    cnn_names.push_back(n);
    return true;
  });
  if (!cnn_names.empty()) {
    tgb::run_cnn_workloads(cnn_names, thread_counts, sample_factor,
                           torch ? plugin_path() : nullptr);
  }
  // The op table, with LibTorch as peer.
  if (std::erase(workload_names, std::string("ops")) > 0) {
    tgb::run_op_workloads(op_rows, thread_counts, sample_factor, torch ? plugin_path() : nullptr);
  }
#endif
  // The generation workloads (generate-124m, generate-124m-bf16, generate-355m), with PyTorch
  // eager as the peer.
  std::vector<std::string> generate_names;
  std::erase_if(workload_names, [&](const std::string& n) {
    if (!tgb::is_generate_workload(n)) return false;
    generate_names.push_back(n);
    return true;
  });
  int generate_status = 0;
  if (!generate_names.empty()) {
    generate_status = tgb::run_generate_workloads(generate_names, thread_counts);
  }
  if (workload_names.empty()) return generate_status;
  if (workload_names.empty()) return 0;

  struct Row {
    std::string workload;
    int threads;
    std::string label;
    double median;
  };
  std::vector<Row> rows;
  for (int threads : thread_counts) {
    std::string torch_info;
    const int64_t n = 1024;
    std::fprintf(stderr, "[%d thread%s] measuring the GEMM peak, then the workloads...\n", threads,
                 threads == 1 ? "" : "s");
    const Peaks before = measure_peaks(threads, n, torch, &torch_info);
    struct Done {
      const tgb::Workload* w;
      double dropout;
      std::string name;  // "book p=0.1"
      Plan plan;
      std::vector<std::string> labels;
      std::vector<EngineResult> r;
    };
    std::vector<Done> done;
    for (const std::string& name : workload_names) {
      const tgb::Workload* w = nullptr;
      for (const tgb::Workload& c : tgb::kWorkloads) {
        if (name == c.name) w = &c;
      }
      if (w == nullptr) die("unknown workload " + name);
      const Plan plan = plan_for(*w, sample_factor);
      for (const double dropout : dropouts) {
        std::vector<std::vector<std::string>> engines;
        std::vector<std::string> labels;
        engines.push_back(
            step_worker_args("tapegrad", *w, threads, plan.steps_per_sample, dropout));
        labels.push_back("tapegrad");
        if (!baseline.empty() && dropout == 0.0) {
          engines.push_back(
              step_worker_args("tapegrad", *w, threads, plan.steps_per_sample, dropout));
          engines.back().insert(engines.back().begin(), "--exe=" + baseline);
          labels.push_back("baseline");
        }
        if (torch) {
          labels.push_back("libtorch");
          engines.push_back(step_worker_args("torch", *w, threads, plan.steps_per_sample, dropout));
          // LibTorch's OpenMP and OpenBLAS threads asleep soon after their work, not spinning
          // against each other (as the GPT workloads' peers; see gpt_workload.cpp).
          engines.back().insert(engines.back().begin(), {"--env=OMP_WAIT_POLICY=PASSIVE",
                                                         "--env=OPENBLAS_THREAD_TIMEOUT=4"});
        }
        char name_buf[64];
        std::snprintf(name_buf, sizeof name_buf, "%s p=%g", w->name, dropout);
        std::fprintf(stderr, "  %s...\n", name_buf);
        done.push_back({w, dropout, name_buf, plan, labels, run_workload(plan, engines)});
      }
    }
    const Peaks after = measure_peaks(threads, n, torch, nullptr);
    const double peak = std::max(before.best(), after.best());

    std::printf("\n== %d thread%s ==\n", threads, threads == 1 ? "" : "s");
    std::printf("float32 GEMM %lldx%lldx%lld, best of 5, measured before / after the workloads:\n",
                static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n));
    std::printf("  Eigen (tapegrad's kernel)        %6.1f / %6.1f GFLOP/s\n", before.eigen,
                after.eigen);
    if (torch) {
      std::printf("  LibTorch mm (the comparator)     %6.1f / %6.1f GFLOP/s\n", before.torch,
                  after.torch);
      if (before.openblas_avx512 > 0) {
        std::printf(
            "  OpenBLAS forced to AVX-512       %6.1f / %6.1f GFLOP/s "
            "(OPENBLAS_CORETYPE=SkylakeX; not what the comparator runs)\n",
            before.openblas_avx512, after.openblas_avx512);
      }
    }
    std::printf("  -> the machine's measured peak: %.1f GFLOP/s\n", peak);
    if (torch) std::printf("comparator: %s\n", torch_info.c_str());
    // The backend each tapegrad engine ran, as its worker said.
    for (size_t e = 0; !done.empty() && e < done.front().r.size(); ++e) {
      const std::string& info = done.front().r[e].info;
      const size_t gemm = info.find("GEMM: ");
      if (gemm != std::string::npos) {
        std::printf("%s GEMM: %s\n", done.front().labels[e].c_str(), info.c_str() + gemm + 6);
      }
    }
    std::printf("%-12s %-10s %5s %10s %10s %10s %10s %7s %5s %7s %6s %8s %7s %13s\n", "work",
                "engine", "steps", "median us", "min us", "max us", "cpu us", "GFLOP/s", "%peak",
                "x torch", "RSS MB", "RSS/tch", "allocs", "loss@1");
    for (const Done& d : done) {
      const tgb::Workload* w = d.w;
      const Plan& plan = d.plan;
      const std::vector<EngineResult>& r = d.r;
      const double flops = tgb::step_flops(*w);
      for (size_t e = 0; e < r.size(); ++e) {
        const double gflops = flops / (r[e].median() * 1e-6) / 1e9;
        // Speed-up over LibTorch (its median time / this one's) and the peak RSS ratio.
        const double speedup = torch ? r.back().median() / r[e].median() : 0.0;
        const double rss_ratio = torch ? static_cast<double>(r[e].peak_rss_kib) /
                                             static_cast<double>(r.back().peak_rss_kib)
                                       : 0.0;
        std::printf(
            "%-12s %-10s %5d %10.2f %10.2f %10.2f %10.2f %7.2f %5.1f %7.2f %6.1f %8.3f %7.1f "
            "%13.8g\n",
            d.name.c_str(), d.labels[e].c_str(), plan.steps_per_sample, r[e].median(), r[e].min(),
            r[e].max(), EngineResult::median_of(r[e].cpu_us_per_step), gflops,
            100.0 * gflops / peak, speedup, r[e].peak_rss_kib / 1024.0, rss_ratio,
            r[e].allocations_per_step, r[e].loss_first);
      }
      if (torch) {
        const EngineResult& t = r.back();
        const EngineResult& g = r.front();
        const double rel = std::abs(g.loss_first - t.loss_first) / std::abs(t.loss_first);
        const double rel_last = std::abs(g.loss_last - t.loss_last) / std::abs(t.loss_last);
        const bool same_init = g.checksum == t.checksum;
        std::printf(
            "%-12s check: init checksum %s (%.9g); loss@1 rel. diff %.2e %s; loss after "
            "%d steps %.9g vs %.9g (rel. diff %.2e)\n",
            d.name.c_str(), same_init ? "identical" : "DIFFERS", g.checksum, rel,
            rel < 1e-5 ? "OK" : "MISMATCH", (plan.warmup + plan.samples) * plan.steps_per_sample,
            g.loss_last, t.loss_last, rel_last);
        std::printf("%-12s ratio tapegrad/LibTorch, median time (peak RSS):", d.name.c_str());
        for (size_t e = 0; e + 1 < r.size(); ++e) {
          std::printf(" %s %.4f (%.3f)", d.labels[e].c_str(), r[e].median() / t.median(),
                      static_cast<double>(r[e].peak_rss_kib) / static_cast<double>(t.peak_rss_kib));
        }
        std::printf("\n");
      }
      for (size_t e = 0; e < r.size(); ++e)
        rows.push_back({d.name, threads, d.labels[e], r[e].median()});
    }
    std::fflush(stdout);
  }
  // Thread scaling of every engine, where several thread counts ran.
  if (thread_counts.size() > 1) {
    std::printf("\nthread scaling (speed relative to %d thread%s, from the medians):\n",
                thread_counts.front(), thread_counts.front() == 1 ? "" : "s");
    for (const Row& a : rows) {
      if (a.threads != thread_counts.front()) continue;
      for (const Row& b : rows) {
        if (b.workload == a.workload && b.label == a.label && b.threads != a.threads) {
          std::printf("  %-12s %-10s %d threads: %.2fx\n", a.workload.c_str(), a.label.c_str(),
                      b.threads, a.median / b.median);
        }
      }
    }
  }
  std::printf("\nload average at end: %s\n", load_average().c_str());
  return 0;
}
