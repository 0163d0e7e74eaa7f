// tapegrad-checkpoint-bench: one GPT-2 training step (forward, cross_entropy, backward, AdamW) at
// batch 1 × T tokens with random weights, with or without activation checkpointing: median step
// time, the activation memory (the tape's arena plus the checkpoint scratch tapes' peak) and the
// process's peak RSS. --lora-rank trains appendix E's LoRA adapters (every Linear wrapped, the
// model frozen) instead of every weight. Run once per setting, each in a process of its own (peak
// RSS is per process): docs/performance.md, "Activation checkpointing", has the commands and
// figures.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <tapegrad/cli/cli.h>
#include <tapegrad/graph/checkpoint.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/nn/gpt.h>
#include <tapegrad/nn/lora.h>
#include <tapegrad/optim/adam.h>
#include <tapegrad/train/training.h>
#include <CLI/CLI.hpp>

using namespace tapegrad;

int main(int argc, char** argv) {
  CLI::App app{"tapegrad-checkpoint-bench: a GPT-2 training step with and without checkpointing"};
  std::string model = "355m";
  int64_t tokens = 1024;
  int64_t every = 0;
  int steps = 3;
  int threads = 2;
  int64_t lora_rank = 0;
  app.add_option("--model", model, "gpt2 size")
      ->check(CLI::IsMember({"124m", "355m", "774m", "1558m"}));
  app.add_option("--tokens", tokens, "T, batch 1")->check(cli::in_range(1, 1024));
  app.add_option("--checkpoint-every", every, "blocks per checkpointed segment (0: none)")
      ->check(cli::non_negative());
  app.add_option("--steps", steps, "steps (the first is warm-up, not timed)")
      ->check(cli::in_range(2, 1000));
  app.add_option("--threads", threads, "threads per step")->check(cli::in_range(1, 256));
  app.add_option("--lora-rank", lora_rank,
                 "train LoRA adapters of this rank (alpha = rank) on the frozen model (0: every "
                 "weight)")
      ->check(cli::non_negative());
  if (const std::optional<int> exit_code = cli::parse(app, argc, argv)) return *exit_code;
  try {
    nn::GPTConfig cfg = nn::GPT_CONFIG_124M;
    if (model == "355m") cfg = {50257, 1024, 1024, 16, 24, 0.1, false};
    if (model == "774m") cfg = {50257, 1024, 1280, 20, 36, 0.1, false};
    if (model == "1558m") cfg = {50257, 1024, 1600, 25, 48, 0.1, false};
    set_num_threads(threads);
    manual_seed(123);
    nn::GPTModel gpt(cfg);
    if (lora_rank > 0) {
      gpt.requires_grad_(false);
      nn::replace_linear_with_lora(gpt, lora_rank, static_cast<double>(lora_rank));
    }
    gpt.set_checkpoint_every(every);
    AdamW opt(gpt.trainable_parameters(), {.lr = 1e-5, .weight_decay = 0.1});
    Generator ids_generator(123);
    std::vector<int64_t> in(static_cast<size_t>(tokens)), target(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      in[i] = ids_generator.random() % cfg.vocab_size;
      target[i] = ids_generator.random() % cfg.vocab_size;
    }
    const Ids input(Shape{1, tokens}, in), targets(Shape{1, tokens}, target);
    Tape tape;
    TapeScope scope(tape);
    std::vector<double> seconds;
    size_t activation_bytes = 0;
    for (int step = 0; step < steps; ++step) {
      const auto start = std::chrono::steady_clock::now();
      tape.reset();
      reset_checkpoint_peak();
      opt.zero_grad();
      Tensor loss = calc_loss_batch(input, targets, gpt);
      loss.backward();
      opt.step();
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      activation_bytes = tape.arena().bytes_in_use() + checkpoint_scratch_peak_bytes();
      std::printf("step %d: loss %.6f, %.2f s\n", step, loss.item(), s);
      std::fflush(stdout);
      if (step > 0) seconds.push_back(s);
    }
    std::sort(seconds.begin(), seconds.end());
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf(
        "gpt2-%s T=%lld checkpoint_every=%lld lora_rank=%lld (%lld trainable) threads=%d: median "
        "step %.2f s, activation memory "
        "%.1f MiB (tape %.1f + scratch %.1f), peak RSS %.2f GiB\n",
        model.c_str(), static_cast<long long>(tokens), static_cast<long long>(every),
        static_cast<long long>(lora_rank), static_cast<long long>(gpt.num_trainable_parameters()),
        threads, seconds[seconds.size() / 2], static_cast<double>(activation_bytes) / (1 << 20),
        static_cast<double>(tape.arena().bytes_in_use()) / (1 << 20),
        static_cast<double>(checkpoint_scratch_peak_bytes()) / (1 << 20),
        static_cast<double>(usage.ru_maxrss) / (1 << 20));
  } catch (const Error& e) {
    std::fprintf(stderr, "tapegrad-checkpoint-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
