// tapegrad-bench's fine-tuning workloads: one training step of the book's chapter-6 classifier
// recipe (finetune-124m) and of appendix E's LoRA (lora-124m) on GPT_CONFIG_124M with qkv_bias
// (random weights), batch 8 of 120 tokens, against PyTorch eager running the book's code
// (tools/bench/torch_gpt.py, the LoRA classes from tests/goldens/finetune/finetune_reference.py)
// with the default and the tuned malloc, each engine a process of its own, interleaved as the GPT
// workloads run theirs (gpt_workload.cpp's run_group).
//
// full-124m is the same with every parameter trainable (full fine-tuning with the new head): what
// a LoRA step is to cost clearly less than.
//
// One step, as the book's train_classifier_simple takes it: zero_grad, calc_loss_batch (the
// cross-entropy of the last token's 2-class logits), backward, AdamW(model.parameters(), 5e-5,
// weight decay 0.1) step; no clipping.
//   finetune-124m: manual_seed(123), GPTModel, everything frozen, manual_seed(123), out_head =
//     Linear(768, 2), then the last transformer block and the final norm trainable (7,090,946).
//   lora-124m: manual_seed(123), GPTModel, manual_seed(123), out_head = Linear(768, 2),
//     everything frozen, replace_linear_with_lora(rank 16, alpha 16) (2,666,528 trainable).
// Same start: the same seeds give both engines the same weights and adapters (tests/nn), the
// tokens come from torch.randint's rule on a Generator seeded 123 (as the GPT workloads), each
// row's label the parity of one more token; the init checksum and the loss at step 1 are checked.
#include "tools/bench/finetune_workload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/gemm/gemm.h>
#include <tapegrad/kernels/gemm/matmul_precision.h>
#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/nn/gpt.h>
#include <tapegrad/nn/lora.h>
#include <tapegrad/optim/adam.h>
#include <tapegrad/train/classifier.h>
#include "tools/bench/gpt_workload.h"
#include "tools/bench/process_stats.h"
#include "tools/bench/worker_args.h"

namespace tapegrad_bench {

namespace {

enum class Recipe { Chapter6, Full, LoRA };

// w.bf16: the products' operands in bfloat16 (tapegrad: set_matmul_precision(BFloat16);
// PyTorch: the step's forward under torch.autocast("cpu", bfloat16)).
struct FinetuneWorkload {
  GptWorkload w;
  Recipe recipe;
  int64_t lora_rank;  // LoRA only
  double lora_alpha;
};

// The book's chapter-6 BASE_CONFIG: GPT_CONFIG_124M with qkv_bias and no dropout.
constexpr tapegrad::nn::GPTConfig kConfig124M{50257, 1024, 768, 12, 12, 0.0, true};

// Warm-up samples: the first steps pay one-time costs (the optimiser's moments, allocator growth).
const FinetuneWorkload kFinetuneWorkloads[] = {
    {{"finetune-124m", kConfig124M, 8, 120, 1, 2, 5, false}, Recipe::Chapter6, 0, 0},
    {{"lora-124m", kConfig124M, 8, 120, 1, 2, 5, false}, Recipe::LoRA, 16, 16},
    {{"full-124m", kConfig124M, 8, 120, 1, 2, 5, false}, Recipe::Full, 0, 0},
    {{"finetune-124m-bf16", kConfig124M, 8, 120, 1, 2, 5, true}, Recipe::Chapter6, 0, 0},
    {{"lora-124m-bf16", kConfig124M, 8, 120, 1, 2, 5, true}, Recipe::LoRA, 16, 16},
    {{"full-124m-bf16", kConfig124M, 8, 120, 1, 2, 5, true}, Recipe::Full, 0, 0},
};

constexpr double kLr = 5e-5, kWeightDecay = 0.1;  // chapter 6's and appendix E's AdamW
constexpr int64_t kClasses = 2;

const FinetuneWorkload* find_workload(const std::string& name) {
  for (const FinetuneWorkload& f : kFinetuneWorkloads) {
    if (name == f.w.name) return &f;
  }
  return nullptr;
}

// The FLOPs (2 per multiply-add) of one step's matrix products, counted as if every input
// gradient of a product on the path to a trainable parameter ran (attention products dense,
// [T, T]). Per block forward: the four C×C projections and the feed-forward 24NC², scores and
// context 4BT²C; LoRA adds x·A and (x·A)·B to each Linear: 4NCr for a C×C one, 10NCr for each
// feed-forward one. The head is [C, 2] (and its adapter).
//   chapter 6: the forward, plus the last block's backward (2x its forward) and the head's.
//   full: the forward, plus every block's backward and the head's (the embeddings' gradients
//   are gathers, no product).
//   LoRA: the forward, plus every block's backward: the frozen projections' input gradients
//   (1x), the attention products' both (2x), the adapters' both (2x).
double finetune_step_flops(const FinetuneWorkload& f) {
  const GptWorkload& w = f.w;
  const double n = static_cast<double>(w.batch * w.t), c = static_cast<double>(w.cfg.emb_dim);
  const double b = static_cast<double>(w.batch), t = static_cast<double>(w.t);
  const double layers = static_cast<double>(w.cfg.n_layers), k = kClasses;
  const double r = static_cast<double>(f.lora_rank);
  const double linear = 24 * n * c * c, attention = 4 * b * t * t * c, head = 2 * n * c * k;
  if (f.recipe == Recipe::Chapter6) {
    return layers * (linear + attention) + head + 2 * (linear + attention) + 2 * head;
  }
  if (f.recipe == Recipe::Full) return 3 * (layers * (linear + attention) + head);
  const double adapters = 36 * n * c * r, head_adapter = 2 * n * c * r + 2 * n * r * k;
  const double forward = layers * (linear + attention + adapters) + head + head_adapter;
  const double backward =
      layers * (linear + 2 * attention + 2 * adapters) + head + 2 * head_adapter;
  return forward + backward;
}

}  // namespace

bool is_finetune_workload(const std::string& name) {
  return find_workload(name) != nullptr;
}

int finetune_worker_main(const std::vector<std::string>& args) {
  using namespace tapegrad;
  const WorkerArgs a = parse_worker_args(args);
  const std::string& name = a.workload;
  const int threads = a.threads, steps = a.steps;
  const FinetuneWorkload* f = find_workload(name);
  if (f == nullptr) {
    std::fprintf(stderr, "tapegrad-bench: unknown fine-tuning workload %s\n", name.c_str());
    return 2;
  }
  set_num_threads(threads);
  const double gemm_gflops = tapegrad_gemm_gflops();
  const double bf16_gemm_gflops = f->w.bf16 ? tapegrad_gemm_gflops(MatmulPrecision::BFloat16) : 0.0;
  if (f->w.bf16) set_matmul_precision(MatmulPrecision::BFloat16);

  // What a user writes (the book's chapter 6 / appendix E; torch_gpt.py's build_finetune).
  const nn::GPTConfig& cfg = f->w.cfg;
  manual_seed(123);
  nn::GPTModel model(cfg);
  if (f->recipe == Recipe::Full) {
    manual_seed(123);
    model.replace_module("out_head", nn::Linear(cfg.emb_dim, kClasses));
  } else if (f->recipe == Recipe::Chapter6) {
    model.requires_grad_(false);
    manual_seed(123);
    model.replace_module("out_head", nn::Linear(cfg.emb_dim, kClasses));  // [2, C] with bias
    model.trf_blocks[model.trf_blocks.size() - 1].requires_grad_(true);
    model.final_norm.requires_grad_(true);
  } else {
    manual_seed(123);
    model.replace_module("out_head", nn::Linear(cfg.emb_dim, kClasses));
    model.requires_grad_(false);
    nn::replace_linear_with_lora(model, f->lora_rank, f->lora_alpha);
  }
  model.train();
  AdamW optimizer(model.parameters(), {.lr = kLr, .weight_decay = kWeightDecay});
  // torch.randint(0, V, (B, T + 1), generator=torch.Generator().manual_seed(123)); the inputs
  // are each row's first T tokens, the label the parity of its last.
  Generator gen(123);
  const int64_t b = f->w.batch, t = f->w.t, v = cfg.vocab_size;
  std::vector<int64_t> tokens(static_cast<size_t>(b * (t + 1)));
  for (int64_t& id : tokens) id = static_cast<int64_t>(gen.random() % static_cast<uint64_t>(v));
  std::vector<int64_t> input_ids, label_ids;
  for (int64_t row = 0; row < b; ++row) {
    for (int64_t j = 0; j < t; ++j) input_ids.push_back(tokens[row * (t + 1) + j]);
    label_ids.push_back(tokens[row * (t + 1) + t] % kClasses);
  }
  const Ids inputs(Shape{b, t}, input_ids);  // [B, T]
  const Ids labels(Shape{b}, label_ids);     // [B]
  Tape tape;
  TapeScope scope(tape);
  auto step = [&] { return classifier::train_step(model, inputs, labels, optimizer, tape); };

  double checksum = 0;
  for (const Parameter& p : model.parameters()) {
    for (int64_t i = 0; i < p.numel(); ++i) checksum += static_cast<double>(p.data<float>()[i]);
  }
  return serve(step, checksum, gemm_gflops, bf16_gemm_gflops,
               std::string("tapegrad (GEMM: ") + gemm_backend_info() + "; vmath: SLEEF " +
                   vmath::isa() + "; " +
                   (f->w.bf16 ? std::string("bf16 products: ") + bf16_engine_info() + "; " : "") +
                   std::to_string(model.num_parameters()) + " parameters, " +
                   std::to_string(model.num_trainable_parameters()) + " trainable)",
               steps);
}

int run_finetune_workloads(const std::vector<std::string>& names,
                           const std::vector<int>& thread_counts, double sample_factor) {
  std::printf("Fine-tuning workloads: load average at start: %s\n", load_average().c_str());
  // Medians per (threads, workload): tapegrad's and PyTorch's faster run, for the LoRA lines.
  struct Median {
    int threads;
    std::string workload;
    double tapegrad, pytorch;
  };
  std::vector<Median> medians;
  for (int threads : thread_counts) {
    for (const std::string& name : names) {
      const FinetuneWorkload& f = *find_workload(name);
      const GptWorkload& w = f.w;
      const int samples = std::max(3, static_cast<int>(std::lround(w.samples * sample_factor)));
      const std::string k = std::to_string(w.steps_per_sample), n = std::to_string(threads);
      std::vector<Engine> engines{{"tapegrad",
                                   "",
                                   {"/proc/self/exe", "--worker", "tapegrad-finetune", "--workload",
                                    name, "--threads", n, "--steps", k},
                                   {}}};
      // torch_gpt.py sets its own environment (OpenBLAS and its kernels, malloc, threads) and
      // re-executes itself.
      for (const char* kind : {"default", "tuned"}) {
        engines.push_back({std::string("pytorch-eager/") + kind + "-malloc",
                           "PyTorch",
                           {"/usr/bin/python3", torch_gpt_script(), "--serve", "--workload", name,
                            "--threads", n, "--steps", k, "--malloc", kind},
                           {}});
      }
      const double flops = finetune_step_flops(f);
      std::printf(
          "\n== %s, %d thread%s: batch %lld, T %lld, %.4g GFLOP per step (matrix products) ==\n",
          w.name, threads, threads == 1 ? "" : "s", static_cast<long long>(w.batch),
          static_cast<long long>(w.t), flops / 1e9);
      std::fflush(stdout);  // the table so far, before the progress line on stderr
      std::fprintf(stderr, "[%d thread%s] %s...\n", threads, threads == 1 ? "" : "s", w.name);
      const std::vector<Result> r = run_group(w, engines, samples);
      const Peaks peaks = print_engines(r);
      print_rows(w, engines, r, peaks, flops);
      // The targets, against PyTorch's faster run: speed-up >= 1.5, peak RSS <= 0.8 of its.
      size_t best = 1;
      for (size_t e = 2; e < r.size(); ++e) {
        if (r[e].median() < r[best].median()) best = e;
      }
      const double speedup = r[best].median() / r[0].median();
      const double rss = static_cast<double>(r[0].rss_kib) / static_cast<double>(r[best].rss_kib);
      std::printf(
          "%-9s targets vs %s: speed-up %.3fx (target >= 1.5: %s), peak RSS %.3f of its (target "
          "<= 0.8: %s)\n",
          w.name, r[best].label.c_str(), speedup, speedup >= 1.5 ? "met" : "MISSED", rss,
          rss <= 0.8 ? "met" : "MISSED");
      medians.push_back({threads, name, r[0].median(), r[best].median()});
      std::fflush(stdout);
    }
  }
  // A LoRA step against a full fine-tuning step and a chapter-6 step, per engine (medians from
  // their groups above).
  for (const Median& lora : medians) {
    if (!lora.workload.starts_with("lora-")) continue;
    const std::string suffix = lora.workload.substr(std::string("lora-").size());  // "124m[-bf16]"
    for (const Median& other : medians) {
      if (other.workload.starts_with("lora-") || other.threads != lora.threads) continue;
      if (other.workload.substr(other.workload.find('-') + 1) != suffix) continue;
      std::printf(
          "\nLoRA step / %s step, %d thread%s (median times): tapegrad %.3f, PyTorch eager "
          "%.3f\n",
          other.workload.c_str(), lora.threads, lora.threads == 1 ? "" : "s",
          lora.tapegrad / other.tapegrad, lora.pytorch / other.pytorch);
    }
  }
  std::printf("\nFine-tuning workloads: load average at end: %s\n", load_average().c_str());
  return 0;
}

}  // namespace tapegrad_bench
