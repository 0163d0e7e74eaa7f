// tapegrad-bench's Qwen3 training-step workloads: one step of the book's train_model_simple
// (zero_grad, cross-entropy of the flattened logits, backward, AdamW(lr 4e-4, weight decay 0.1,
// torch's betas and eps), no clipping) on nn::Qwen3Model with QWEN_CONFIG_06_B in float32 (random
// weights from manual_seed(123), 751,632,384 parameters), one fixed batch of 2 x 256 tokens,
// against PyTorch eager running the book's Qwen3Model (tools/bench/torch_gpt.py --serve, the
// model of qwen3_kv_reference.py without its cache) with malloc tuned and OpenBLAS's kernels for
// this CPU.
//
// Weights, gradients and AdamW's two moments take 12 GB per engine: the engines run one after the
// other (gpt_workload.cpp's run_group with one engine each), never both alive, so neither swaps
// and each one's peak RSS is its own. The samples are therefore not interleaved: the load average
// is printed at the start and the end of each engine's run.
//
// qwen3-0.6b-step-bf16: tapegrad under set_matmul_precision(BFloat16) against PyTorch with the
// forward and the loss under torch.autocast("cpu", bfloat16), the backward outside.
//
// Same start: manual_seed(123) gives the book's Qwen3Model weights bit for bit (tests/nn), the
// tokens come from torch.randint's rule on a Generator seeded 123 (as the GPT workloads); the init
// checksum and the losses at the first and the last step are checked.
#include "tools/bench/qwen3_step_workload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/gemm/gemm.h>
#include <tapegrad/kernels/gemm/matmul_precision.h>
#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/nn/qwen3.h>
#include <tapegrad/ops/ops.h>
#include <tapegrad/optim/adam.h>
#include "tools/bench/gpt_workload.h"
#include "tools/bench/process_stats.h"
#include "tools/bench/worker_args.h"

namespace tapegrad_bench {

namespace {

struct Qwen3StepWorkload {
  GptWorkload w;  // name, batch, t, steps per sample, warm-up and timed samples, bf16 (cfg unused)
  tapegrad::nn::Qwen3Config cfg;
};

// Two warm-up samples: the first steps fault in the gradients, AdamW's moments and the tape.
const Qwen3StepWorkload kQwen3StepWorkloads[] = {
    {{"qwen3-0.6b-step", {}, 2, 256, 1, 2, 3, false}, tapegrad::nn::QWEN_CONFIG_06_B},
    {{"qwen3-0.6b-step-bf16", {}, 2, 256, 1, 2, 3, true}, tapegrad::nn::QWEN_CONFIG_06_B},
};

constexpr double kLr = 4e-4, kWeightDecay = 0.1;  // torch_gpt.py's defaults

const Qwen3StepWorkload* find_workload(const std::string& name) {
  for (const Qwen3StepWorkload& q : kQwen3StepWorkloads) {
    if (name == q.w.name) return &q;
  }
  return nullptr;
}

// The FLOPs (2 per multiply-add) of one step's matrix products: forward, every block's
// projections (C·H·D for queries and out_proj, C·G·D for keys and values, 3·C·F for the
// feed-forward) and the head over all N = B·T tokens, the attention's scores and context dense
// ([T, T] per head, as torch runs them); the backward twice the forward.
double qwen3_step_flops(const Qwen3StepWorkload& q) {
  const tapegrad::nn::Qwen3Config& c = q.cfg;
  const double n = static_cast<double>(q.w.batch * q.w.t), t = static_cast<double>(q.w.t);
  const double C = static_cast<double>(c.emb_dim), D = static_cast<double>(c.resolved_head_dim());
  const double HD = static_cast<double>(c.n_heads) * D, GD = static_cast<double>(c.n_kv_groups) * D;
  const double linear = 2 * C * HD + 2 * C * GD + 3 * C * static_cast<double>(c.hidden_dim);
  const double attention = 4 * static_cast<double>(q.w.batch * c.n_heads) * t * t * D;
  const double forward = static_cast<double>(c.n_layers) * (2 * n * linear + attention) +
                         2 * n * C * static_cast<double>(c.vocab_size);
  return 3 * forward;
}

}  // namespace

bool is_qwen3_step_workload(const std::string& name) {
  return find_workload(name) != nullptr;
}

int qwen3_step_worker_main(const std::vector<std::string>& args) {
  using namespace tapegrad;
  const WorkerArgs a = parse_worker_args(args);
  const std::string& name = a.workload;
  const int threads = a.threads, steps = a.steps;
  const Qwen3StepWorkload* q = find_workload(name);
  if (q == nullptr) {
    std::fprintf(stderr, "tapegrad-bench: unknown Qwen3 step workload %s\n", name.c_str());
    return 2;
  }
  set_num_threads(threads);
  const double gemm_gflops = tapegrad_gemm_gflops();
  const double bf16_gemm_gflops = q->w.bf16 ? tapegrad_gemm_gflops(MatmulPrecision::BFloat16) : 0;
  if (q->w.bf16) set_matmul_precision(MatmulPrecision::BFloat16);

  // What a user writes (torch_gpt.py's build_qwen3_step, line for line).
  manual_seed(123);
  nn::Qwen3Model model(q->cfg);
  model.train();
  const std::vector<Parameter> params = model.parameters();
  AdamW optimizer(params, {.lr = kLr, .weight_decay = kWeightDecay});
  // torch.randint(0, V, (B, T + 1), generator=torch.Generator().manual_seed(123))
  Generator gen(123);
  const int64_t b = q->w.batch, t = q->w.t, v = q->cfg.vocab_size;
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
    optimizer.step();
    return loss.item();
  };

  double checksum = 0;
  for (const Parameter& p : params) {
    for (int64_t i = 0; i < p.numel(); ++i) checksum += static_cast<double>(p.data<float>()[i]);
  }
  return serve(step, checksum, gemm_gflops, bf16_gemm_gflops,
               std::string("tapegrad Qwen3Model (GEMM: ") + gemm_backend_info() +
                   "; vmath: SLEEF " + vmath::isa() + "; " + cpu_capability_info() +
                   (q->w.bf16 ? std::string("; bf16 products: ") + bf16_engine_info() : "") + ")",
               steps);
}

int run_qwen3_step_workloads(const std::vector<std::string>& names,
                             const std::vector<int>& thread_counts, double sample_factor) {
  for (int threads : thread_counts) {
    for (const std::string& name : names) {
      const Qwen3StepWorkload& q = *find_workload(name);
      const GptWorkload& w = q.w;
      const int samples = std::max(1, static_cast<int>(std::lround(w.samples * sample_factor)));
      const std::string k = std::to_string(w.steps_per_sample), n = std::to_string(threads);
      const std::vector<Engine> engines{
          {"tapegrad",
           "",
           {"/proc/self/exe", "--worker", "tapegrad-qwen3-step", "--workload", name, "--threads", n,
            "--steps", k},
           {}},
          {w.bf16 ? "pytorch-autocast/tuned-malloc" : "pytorch-eager/tuned-malloc",
           w.bf16 ? "PyTorch autocast" : "PyTorch",
           {"/usr/bin/python3", torch_gpt_script(), "--serve", "--workload", name, "--threads", n,
            "--steps", k, "--malloc", "tuned"},
           {}}};
      std::printf(
          "\n== %s, %d thread%s: batch %lld, T %lld, %.4g GFLOP per step (matrix products); %d "
          "warm-up and %d timed samples of %d step%s per engine ==\n",
          w.name, threads, threads == 1 ? "" : "s", static_cast<long long>(w.batch),
          static_cast<long long>(w.t), qwen3_step_flops(q) / 1e9, w.warmup, samples,
          w.steps_per_sample, w.steps_per_sample == 1 ? "" : "s");
      std::vector<Result> r;
      for (const Engine& e : engines) {
        std::printf("%s: load average at start %s", e.label.c_str(), load_average().c_str());
        std::fflush(stdout);
        std::fprintf(stderr, "[%d thread%s] %s: %s...\n", threads, threads == 1 ? "" : "s", w.name,
                     e.label.c_str());
        r.push_back(run_group(w, {e}, samples).front());
        std::printf(", at end %s\n", load_average().c_str());
      }
      const Peaks peaks = print_engines(r);
      print_rows(w, engines, r, peaks, qwen3_step_flops(q));
      const double speedup = r[1].median() / r[0].median();
      const double rss = static_cast<double>(r[0].rss_kib) / static_cast<double>(r[1].rss_kib);
      std::printf("%s target vs %s: speed-up %.3fx (target >= 1.3: %s); peak RSS %.3f of %s's\n",
                  w.name, r[1].label.c_str(), speedup, speedup >= 1.3 ? "met" : "MISSED", rss,
                  r[1].label.c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace tapegrad_bench
