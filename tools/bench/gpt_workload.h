// tapegrad-bench's GPT workloads (gpt-tiny, gpt2-124m, and their -bf16 variants): a full training
// step of the library's nn::GPTModel against LibTorch (the plugin) and PyTorch eager
// (tools/bench/torch_gpt.py), interleaved in one run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <tapegrad/kernels/gemm/matmul_precision.h>
#include <tapegrad/nn/gpt.h>

namespace tapegrad_bench {

// True for the names of the GPT workloads ("gpt-tiny", "gpt2-124m", and their "-bf16" variants:
// tapegrad's products on bfloat16 operands, against PyTorch in float32 and under torch.autocast
// and LibTorch in float32).
bool is_gpt_workload(const std::string& name);

// The worker side ("--worker tapegrad-gpt --workload NAME --threads N --steps K", or
// "--worker torch-gpt ... --plugin PATH" for LibTorch): one process running the step on request,
// the protocol of bench.cpp's step workers.
int gpt_worker_main(const std::vector<std::string>& args);

// The parent side: runs each GPT workload named, at each thread count, with tapegrad and the
// peers (LibTorch when torch_plugin is not null, and PyTorch eager; each with default and tuned
// malloc) interleaved, and prints the rows and ratios. A non-empty `baseline` is another build
// of tapegrad-bench (e.g. of an older commit) whose tapegrad worker runs beside them, labelled
// baseline, with its own ratio line.
int run_gpt_workloads(const std::vector<std::string>& names, const std::vector<int>& threads,
                      double sample_factor, const char* torch_plugin,
                      const std::string& baseline = "");

// What the GPT workloads share with the fine-tuning workloads (finetune_workload.cpp), which run
// their engines the same way.

// A workload: the model's config, one fixed batch [batch, t], how many steps one sample times,
// how many samples are warm-up (run, not timed) and how many are timed; bf16: tapegrad's step
// runs under set_matmul_precision(BFloat16), PyTorch's forward under torch.autocast(cpu,
// bfloat16). hvp: the step is a Hessian-vector product of the loss w.r.t. every parameter in
// place of a training step (grad with create_graph, then grad of Σ g·v), PyTorch its peer.
struct GptWorkload {
  const char* name;
  tapegrad::nn::GPTConfig cfg;
  int64_t batch, t;
  int steps_per_sample, warmup, samples;
  bool bf16;
  bool hvp = false;
};

// glibc's malloc told to keep its memory: no mmap/munmap of large buffers every step.
inline constexpr const char* kMallocTuned[][2] = {{"MALLOC_MMAP_THRESHOLD_", "4294967296"},
                                                  {"MALLOC_TRIM_THRESHOLD_", "4294967296"},
                                                  {"MALLOC_TOP_PAD_", "1073741824"}};

// One engine's figures from run_group.
struct Result {
  std::string label, info;
  double checksum = 0, gemm_gflops = 0;
  double bf16_gemm_gflops = 0;     // 0: not measured (float32 workloads, float32 peers)
  std::vector<double> ms, cpu_ms;  // per step, one per sample
  // CPU time of the thread that runs the step (per step): with more threads, the work the others
  // did not take off it, so 1-thread CPU / n-thread main-thread CPU bounds the speed-up threads
  // can give on idle cores, whatever the machine's load does to the wall times.
  std::vector<double> main_cpu_ms;
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

// One engine of a workload: its row label, its peer ("" for tapegrad), its command line and
// environment.
struct Engine {
  std::string label, peer;
  std::vector<std::string> argv, env;
};

// GFLOP/s of the library's own product on 1024³, best of 5: float32 (its default backend), or
// with MatmulPrecision::BFloat16 the bf16 products as a user gets them (oneDNN where linked).
double tapegrad_gemm_gflops(
    tapegrad::MatmulPrecision precision = tapegrad::MatmulPrecision::Highest);

// The PyTorch-eager peer's script (TAPEGRAD_BENCH_TORCH_GPT overrides the built-in path).
const char* torch_gpt_script();

// The worker's side of bench.cpp's protocol: "ready <checksum> <sgemm GFLOP/s> <bf16 GEMM
// GFLOP/s, 0 if not measured> <info>", then for each "s" K steps, answered "<seconds> <first
// loss> <last loss> <allocations> <CPU seconds> <CPU seconds of the calling thread>", and for
// "q" the peak RSS (KiB).
int serve(const std::function<double()>& step, double checksum, double gemm_gflops,
          double bf16_gemm_gflops, const std::string& info, int steps);

// Runs the engines of one group, each a process of its own, interleaved (alternating who goes
// first), and returns their results (engine 0 is tapegrad's).
std::vector<Result> run_group(const GptWorkload& w, const std::vector<Engine>& engines,
                              int samples);

// The GEMM peaks measured in one group: the best float32 and bf16 1024³ products its workers
// reported (bf16 0 when none measured it).
struct Peaks {
  double sgemm = 0, bf16 = 0;
};

// Prints each engine's info and GEMM figures and the group's peaks, and returns the peaks.
Peaks print_engines(const std::vector<Result>& r);

// Prints one group's rows ("x torch" and "RSS/tch" against the group's fastest peer run; GFLOP/s
// from `flops` per step; for bf16 workloads also "%bf16pk", against the bf16 peak) and each
// peer's check against tapegrad (init checksum, losses).
void print_rows(const GptWorkload& w, const std::vector<Engine>& engines,
                const std::vector<Result>& r, const Peaks& peaks, double flops);

}  // namespace tapegrad_bench
