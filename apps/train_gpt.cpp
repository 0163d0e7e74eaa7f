// Trains the GPT of chapter 4 on a text file, as chapter 5 of *Build a Large Language Model (From
// Scratch)* does (ch05/01_main-chapter-code/gpt_train.py): AdamW with weight decay 0.1, optional
// warm-up + cosine schedule and gradient clipping, train/validation loss every --eval-freq steps,
// a greedy sample after each epoch, and atomic checkpoints that --resume continues bit for bit.
//
// Writes into --out DIR: loss.csv (step, train loss, val loss, tokens seen, at each evaluation),
// samples.txt (one sample per epoch), loss.png (the book's loss figure, viz/plot.h's
// plot_values, against steps; skipped with a note when gnuplot is missing), attention.png (every
// head of the last block on the
// --prompt, as heatmaps) and checkpoint.safetensors (model under torch's names,
// AdamW state, schedule, generators, data position and the run's configuration).
//
// Default data: the King James Bible (4.3 MB, public domain) as plain text in the user's cache
// (${XDG_CACHE_HOME:-~/.cache}/tapegrad/kjv.txt), written by tools/kjv_text.sh from Debian's
// bible-kjv-text with the `bible` reader of bible-kjv (the package stores the text compressed);
// `bash tools/dev.sh main` runs it.
//
// Presets (the model; the data options below can override the context length):
//   tiny   bytes tokenizer, V 256, context 128, C 128, 4 heads, 2 layers, batch 8, lr 2e-3
//   small  gpt2 tokenizer, context 256, C 384, 6 heads, 6 layers, batch 8, lr 6e-4
//   124M   gpt2 tokenizer, the book's GPT_CONFIG_124M with context 256 (as gpt_train.py),
//          batch 2, lr 5e-4
// Dimension names: B batch, T = context length, C = emb_dim, V vocabulary.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tapegrad/cli/cli.h>
#include <CLI/CLI.hpp>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <tapegrad/dist/job.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/io/atomic_file.h>
#include <tapegrad/io/safetensors.h>
#include <tapegrad/kernels/gemm/matmul_precision.h>
#include <tapegrad/tapegrad.h>
#include "common.h"

using namespace tapegrad;
namespace fs = std::filesystem;

namespace {

// The installed program's name (CMakeLists.txt): every message it prints begins with it.
const std::string kProgram = "tapegrad-train-gpt";

struct Preset {
  std::string tokenizer;
  nn::GPTConfig cfg;
  int64_t batch_size;
  double lr;
};

const std::map<std::string, Preset>& presets() {
  static const std::map<std::string, Preset> p = {
      {"tiny", {"bytes", {256, 128, 128, 4, 2, 0.1, false}, 8, 2e-3}},
      {"small", {"gpt2", {50257, 256, 384, 6, 6, 0.1, false}, 8, 6e-4}},
      {"124M", {"gpt2", {50257, 256, 768, 12, 12, 0.1, false}, 2, 5e-4}},
  };
  return p;
}

struct Options {
  std::string preset = "tiny";
  std::string data = default_kjv_path();
  int64_t steps = 60;
  std::string out;
  bool resume = false;
  std::string tokenizer;  // empty: the preset's
  int threads = 1;
  std::string matmul_precision = "highest";  // or bf16 (kernels/gemm/matmul_precision.h)
  uint64_t seed = 123;
  int64_t eval_freq = 10;
  int64_t eval_iter = 5;
  int64_t checkpoint_every = 20;
  bool checkpoint_activations = false;
  bool shard_optimizer = false;
  std::optional<int64_t> context_length, emb_dim, n_heads, n_layers, batch_size;
  std::optional<double> lr, drop_rate;
  double weight_decay = 0.1;
  int64_t warmup = 0;
  double min_lr = 0.0;
  double clip = 0.0;
  double train_ratio = 0.9;
  std::string prompt = "And God said";
  int64_t sample_tokens = 50;
  bool plot = true;
};

// Everything that must match for --resume: the model, the data and the optimisation.
std::string config_string(const Options& o, const Preset& p, uint64_t data_size) {
  std::ostringstream s;
  s << "tokenizer=" << p.tokenizer << " vocab_size=" << p.cfg.vocab_size
    << " context_length=" << p.cfg.context_length << " emb_dim=" << p.cfg.emb_dim
    << " n_heads=" << p.cfg.n_heads << " n_layers=" << p.cfg.n_layers
    << " drop_rate=" << p.cfg.drop_rate << " batch_size=" << p.batch_size << " lr=" << p.lr
    << " weight_decay=" << o.weight_decay << " warmup=" << o.warmup << " min_lr=" << o.min_lr
    << " clip=" << o.clip << " seed=" << o.seed << " train_ratio=" << o.train_ratio
    << " data_bytes=" << data_size;
  if (o.warmup > 0) s << " steps=" << o.steps;  // the cosine's length
  return s.str();
}

// The checkpoint's name for rank r's dropout generator: "default" for rank 0 (so one process
// writes exactly the single-process file), "default.rank<r>" for the others.
std::string dropout_generator_name(int rank) {
  return rank == 0 ? "default" : "default.rank" + std::to_string(rank);
}

// Progress output: a bar redrawn with \r on a terminal, plain lines when piped.
class Reporter {
 public:
  Reporter(bool is_main, int64_t total_steps, int64_t first_step, int64_t first_tokens)
      : is_main_(is_main),
        tty_(isatty(STDOUT_FILENO) == 1),
        total_(total_steps),
        first_(first_step),
        tokens0_(first_tokens),
        start_(std::chrono::steady_clock::now()) {}

  void step(const TrainProgress& p) {
    if (!is_main_ || !tty_) return;
    const double frac = static_cast<double>(p.step) / static_cast<double>(total_);
    const int width = 30, filled = static_cast<int>(frac * width);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(static_cast<size_t>(width), '.');
    std::printf("\r[%s] step %" PRId64 "/%" PRId64 "  loss %.3f  %s", bar.c_str(), p.step, total_,
                p.loss, rate(p).c_str());
    std::fflush(stdout);
  }

  void eval(const TrainProgress& p, const EvalLosses& l) {
    if (!is_main_) return;
    if (tty_) std::printf("\r%*s\r", 100, "");
    std::printf("Ep %" PRId64 " (Step %06" PRId64 "): Train loss %.3f, Val loss %.3f, %s\n",
                p.epoch + 1, p.step, l.train_loss, l.val_loss, rate(p).c_str());
    std::fflush(stdout);
  }

  void line(const std::string& text) {
    if (!is_main_) return;
    if (tty_) std::printf("\r%*s\r", 100, "");
    std::printf("%s\n", text.c_str());
    std::fflush(stdout);
  }

 private:
  // tokens/s over this process's steps, and the ETA of the remaining ones.
  std::string rate(const TrainProgress& p) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double done = static_cast<double>(p.step - first_);
    const double tps = static_cast<double>(p.tokens_seen - tokens0_) / std::max(seconds, 1e-9);
    const double eta = done > 0 ? seconds / done * static_cast<double>(total_ - p.step) : 0.0;
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.0f tokens/s, ETA %dm%02ds", tps, static_cast<int>(eta) / 60,
                  static_cast<int>(eta) % 60);
    return buf;
  }

  bool is_main_, tty_;
  int64_t total_, first_, tokens0_;
  std::chrono::steady_clock::time_point start_;
};

const std::string& meta(const std::map<std::string, std::string>& m, const std::string& key,
                        const std::string& path) {
  const auto it = m.find(key);
  if (it == m.end()) throw Error(kProgram + ": --resume: " + path + " has no \"" + key + "\"");
  return it->second;
}

// DIR/attention.png: the attention weights of every head of the last block for the prompt, as
// heatmaps with the tokens on both axes (viz/plot.h; the same drawing as chapter 3's --heatmap).
void plot_last_block_attention(nn::GPTModel& model, const Tokenizer& tokenizer,
                               const std::string& prompt, const std::string& dir) {
  std::vector<int64_t> ids = tokenizer.encode(prompt);
  const auto context = static_cast<size_t>(model.config().context_length);
  if (ids.size() > context) ids.erase(ids.begin(), ids.end() - static_cast<ptrdiff_t>(context));
  if (ids.empty()) return;
  const auto T = static_cast<int64_t>(ids.size());
  std::vector<std::string> tokens;
  for (int64_t id : ids) tokens.push_back(tokenizer.decode(std::span<const int64_t>(&id, 1)));
  auto& block =
      model.trf_blocks.at<nn::TransformerBlock>(static_cast<size_t>(model.config().n_layers - 1));
  const bool was_training = model.training();
  model.eval();
  block.att.keep_attention(true);
  {
    Tape tape;
    TapeScope scope(tape);
    NoGradGuard no_grad;
    model(Ids(Shape{1, T}, ids));  // [1, T, V]; the block keeps its [1, H, T, T] weights
  }
  const int64_t heads = model.config().n_heads;
  apps::try_plot(dir + "/attention.png", kProgram, [&] {
    plot_attention(dir + "/attention.png", Shape{heads, T, T},
                   block.att.last_attention().sequence(0), tokens,
                   "attention of the last block (trf_blocks." +
                       std::to_string(model.config().n_layers - 1) + ")");
  });
  block.att.keep_attention(false);
  model.train(was_training);
}

// The preset's model and optimisation, with the options that override them.
Preset resolve_preset(const Options& o) {
  const auto found = presets().find(o.preset);
  if (found == presets().end()) {
    throw Error(kProgram + ": --preset must be tiny, small or 124M, not \"" + o.preset + "\"");
  }
  Preset p = found->second;
  if (!o.tokenizer.empty()) p.tokenizer = o.tokenizer;
  if (o.context_length) p.cfg.context_length = *o.context_length;
  if (o.emb_dim) p.cfg.emb_dim = *o.emb_dim;
  if (o.n_heads) p.cfg.n_heads = *o.n_heads;
  if (o.n_layers) p.cfg.n_layers = *o.n_layers;
  if (o.batch_size) p.batch_size = *o.batch_size;
  if (o.lr) p.lr = *o.lr;
  if (o.drop_rate) p.cfg.drop_rate = *o.drop_rate;
  return p;
}

// One part of --data as windows of T tokens; too short a part names the option that decides.
GPTDataset make_dataset(const Options& o, std::string_view part, const char* which,
                        const Tokenizer& tokenizer, int64_t T) {
  try {
    return GPTDataset(part, tokenizer, T, T);
  } catch (const Error& e) {
    throw Error(kProgram + ": --data " + o.data + ": the " + which +
                " part is too short for one window of " + std::to_string(T) +
                " tokens (--context-length) + 1: " + e.what());
  }
}

// Every process must run rank 0's configuration and the same schedule of evaluations and
// checkpoints (each is a collective step): mpirun gives each process its own command line.
void check_same_job(const Options& o, const std::string& config, const dist::Job& job) {
  std::ostringstream settings;
  settings << config << " steps=" << o.steps << " eval_freq=" << o.eval_freq
           << " eval_iter=" << o.eval_iter << " checkpoint_every=" << o.checkpoint_every
           << " resume=" << o.resume << " shard_optimizer=" << o.shard_optimizer;
  if (const std::string rank0 = job.broadcast(settings.str()); rank0 != settings.str()) {
    throw Error(kProgram + ": the options of this process differ from rank 0's:\n  rank 0: " +
                rank0 + "\n  this process: " + settings.str());
  }
}

// What a run writes besides the checkpoint, kept in memory and rewritten whole (atomically).
struct RunFiles {
  std::string csv = apps::kLossCsvHeader;
  std::string samples;

  void write(const std::string& out) const {
    apps::write_file(kProgram, out + "/loss.csv", csv);
    apps::write_file(kProgram, out + "/samples.txt", samples);
  }
};

// Restores --resume's checkpoint into the weights, the optimiser, the schedule, the generators
// and the loader's position, after checking that it is this configuration's: nothing is loaded
// from another run's file. Rank 0 reads the file; every process gets its bytes.
TrainState resume(const Options& o, const dist::Job& job, const std::string& ckpt,
                  const std::string& config, const NamedParameters& params,
                  CheckpointExtras& extras, Generator& data_generator, DataLoader& train_loader,
                  RunFiles& files) {
  const bool is_main = job.rank() == 0;
  std::vector<uint8_t> bytes;
  if (is_main) {
    if (!fs::exists(ckpt)) throw Error(kProgram + ": --resume: no checkpoint at " + ckpt);
    bytes = read_whole_file(ckpt);
  }
  job.broadcast(bytes);
  // The configuration first, from the header alone.
  apps::require_config(parse_safetensors(bytes, ckpt), "train_gpt.config", config, ckpt, kProgram);
  // Each process restores its own dropout stream: rank r's is "rng.default.rank<r>".
  CheckpointExtras mine = extras;
  mine.generators = {{dropout_generator_name(job.rank()), &default_generator()},
                     {"data", &data_generator}};
  // A sharded optimiser takes its share of the file's whole AdamW state, read into a whole one.
  std::unique_ptr<AdamW> whole;
  if (job.optimizer_sharded()) {
    whole = std::make_unique<AdamW>(extras.optimizer->parameters());
    mine.optimizer = whole.get();
  }
  try {
    load_checkpoint_bytes(bytes, ckpt, params, mine);
    extras.metadata = mine.metadata;
    if (whole) job.load_optimizer_state(*extras.optimizer, whole->state());
  } catch (const Error& e) {
    throw Error(kProgram + ": --resume: " + e.what());
  }
  const auto& m = extras.metadata;
  TrainState start;
  start.step = std::stoll(meta(m, "train_gpt.step", ckpt));
  start.epoch = std::stoll(meta(m, "train_gpt.epoch", ckpt));
  start.tokens_seen = std::stoll(meta(m, "train_gpt.tokens_seen", ckpt));
  train_loader.restore_epoch(apps::split_ints(meta(m, "train_gpt.data.order", ckpt)),
                             std::stoll(meta(m, "train_gpt.data.position", ckpt)),
                             meta(m, "train_gpt.data.exhausted", ckpt) == "1");
  if (is_main) {
    files.csv = apps::csv_up_to(o.out + "/loss.csv", start.step);
    std::ifstream in(o.out + "/samples.txt");
    std::ostringstream s;
    s << in.rdbuf();
    files.samples = s.str();
  }
  return start;
}

// Called by every process (the generator states are gathered); rank 0 writes the file, with
// rank r's dropout generator as "rng.default.rank<r>" beside rank 0's "rng.default".
// A sharded optimiser's state is gathered on rank 0 and written as AdamW's (the same file as an
// unsharded run's, which resumes sharded or not, on any number of processes).
void save(const dist::Job& job, const std::string& ckpt, const std::string& config,
          const NamedParameters& params, const CheckpointExtras& extras,
          const DataLoader& train_loader, const TrainState& state) {
  const std::vector<std::vector<uint64_t>> states = job.gather(default_generator().state());
  OptimizerState gathered;
  if (job.optimizer_sharded()) gathered = job.optimizer_state(*extras.optimizer);
  if (job.rank() != 0) return;
  std::vector<Generator> others(states.size() > 1 ? states.size() - 1 : 0);
  CheckpointExtras with_ranks = extras;
  std::unique_ptr<AdamW> whole;  // the gathered state, in the optimiser the file is written from
  if (job.optimizer_sharded()) {
    whole = std::make_unique<AdamW>(extras.optimizer->parameters());
    whole->load_state(gathered);
    with_ranks.optimizer = whole.get();
  }
  for (size_t r = 1; r < states.size(); ++r) {
    others[r - 1].set_state(states[r]);
    with_ranks.generators.emplace_back(dropout_generator_name(static_cast<int>(r)), &others[r - 1]);
  }
  with_ranks.metadata = {
      {"train_gpt.config", config},
      {"train_gpt.step", std::to_string(state.step)},
      {"train_gpt.epoch", std::to_string(state.epoch)},
      {"train_gpt.tokens_seen", std::to_string(state.tokens_seen)},
      {"train_gpt.data.order", apps::join(train_loader.order())},
      {"train_gpt.data.position", std::to_string(train_loader.position())},
      {"train_gpt.data.exhausted", train_loader.sampler_exhausted() ? "1" : "0"}};
  save_checkpoint(ckpt, params, with_ranks);
}

// The summary's speed: the wall time between consecutive steps that ran no evaluation (so each
// interval is one training step: batch, forward, backward, all-reduce, clipping, AdamW; an
// epoch's end adds its sample to one interval), and the part of it rank 0 spent in the
// gradients' all-reduce (read through all_reduce_seconds, a running total).
class StepClock {
 public:
  explicit StepClock(std::function<double()> all_reduce_seconds)
      : all_reduce_seconds_(std::move(all_reduce_seconds)) {}

  // A step has ended (`evaluated`: it ran an evaluation, so its interval is not timed); resume()
  // starts the next interval once the work that is no step's (a checkpoint) is done.
  void step(bool evaluated) {
    const auto stamp = std::chrono::steady_clock::now();
    if (previous_ && !evaluated) {
      seconds_ += std::chrono::duration<double>(stamp - *previous_).count();
      all_reduce_ += all_reduce_seconds_() - all_reduce_before_;
      ++steps_;
    }
  }
  void resume() {
    all_reduce_before_ = all_reduce_seconds_();
    previous_ = std::chrono::steady_clock::now();
  }

  // "speed over N steps without evaluation: ... ms/step, ... tokens/s (...)"; empty before two
  // timed steps.
  std::string line(int64_t tokens_per_step, int world_size, int threads) const {
    if (steps_ == 0) return "";
    // Global tokens per step over the mean time of a step without evaluation.
    const double per_step = seconds_ / static_cast<double>(steps_);
    std::ostringstream speed;
    speed << std::fixed << "speed over " << steps_
          << " steps without evaluation: " << std::setprecision(1) << per_step * 1e3 << " ms/step, "
          << std::setprecision(0) << static_cast<double>(tokens_per_step) / per_step
          << " tokens/s (" << world_size << " process" << (world_size > 1 ? "es" : "") << " × "
          << threads << " thread" << (threads > 1 ? "s" : "") << ")";
    if (world_size > 1) {
      speed << "; all-reduce " << std::setprecision(1)
            << all_reduce_ / static_cast<double>(steps_) * 1e3 << " ms/step ("
            << 100.0 * all_reduce_ / seconds_ << "% of the step)";
    }
    return speed.str();
  }

 private:
  std::function<double()> all_reduce_seconds_;
  double seconds_ = 0.0, all_reduce_ = 0.0, all_reduce_before_ = 0.0;
  int64_t steps_ = 0;
  std::optional<std::chrono::steady_clock::time_point> previous_;
};

int run(const Options& o, dist::Job& job) {
  const bool is_main = job.rank() == 0;  // the process that prints and writes
  Preset p = resolve_preset(o);
  set_num_threads(o.threads);
  set_matmul_precision(cli::matmul_precision_named(o.matmul_precision));

  std::unique_ptr<Tokenizer> tokenizer = make_tokenizer(p.tokenizer);
  p.cfg.vocab_size = tokenizer->n_vocab();
  nn::check_config(p.cfg);

  const std::string text = apps::read_text(kProgram, "--data", o.data);
  const TextSplit split = train_val_split(text, o.train_ratio);
  const int64_t T = p.cfg.context_length;
  const GPTDataset train_ds = make_dataset(o, split.train, "training", *tokenizer, T);
  const GPTDataset val_ds = make_dataset(o, split.validation, "validation", *tokenizer, T);

  if (is_main) cli::create_directories("--out", o.out);  // the other processes write nothing
  const std::string ckpt = o.out + "/checkpoint.safetensors";
  std::string config = config_string(o, p, text.size());
  // N processes train on global batches of N · batch_size rows, batch_size each; a checkpoint
  // resumes only with the number of processes that wrote it.
  const int64_t global_batch = p.batch_size * job.world_size();
  if (job.world_size() > 1) config += " processes=" + std::to_string(job.world_size());
  check_same_job(o, config, job);

  manual_seed(o.seed);  // the model's initial weights, then dropout: torch.manual_seed
  nn::GPTModel model(p.cfg);
  if (o.checkpoint_activations) model.set_checkpoint_every(1);
  job.share_parameters(model.parameters());  // rank 0's weights everywhere
  // Each process draws its own dropout masks (rank 0 keeps the run's stream).
  if (job.rank() > 0) manual_seed(job.rank_seed(o.seed));
  Generator data_generator(o.seed);  // the loaders' shuffling: torch.Generator().manual_seed
  DataLoader train_loader(train_ds, global_batch, true, true, &data_generator);
  if (train_loader.size() == 0) {
    throw Error(kProgram + ": --data " + o.data + ": " + std::to_string(train_ds.size()) +
                " training windows, fewer than one batch of " + std::to_string(global_batch) +
                " (--batch-size × processes)");
  }
  // Evaluation sees whole global batches on every process: the losses of one process.
  DataLoader train_eval_loader(train_ds, global_batch, true, true, &data_generator);
  DataLoader val_loader(val_ds, global_batch, false, false, &data_generator);
  // Under mpirun with --shard-optimizer, ZeRO stage 1: each process keeps 1/N of AdamW's moments.
  const std::unique_ptr<Optimizer> adamw =
      job.make_adamw(model.parameters(), AdamWOptions{.lr = p.lr, .weight_decay = o.weight_decay},
                     o.shard_optimizer);
  Optimizer& optimizer = *adamw;
  std::unique_ptr<LRScheduler> scheduler;
  if (o.warmup > 0) {
    if (o.warmup >= o.steps) throw Error(kProgram + ": --warmup must be smaller than --steps");
    scheduler = std::make_unique<WarmupCosineLR>(optimizer, o.warmup, o.steps, 0.01, o.min_lr);
  }
  const NamedParameters params = model.named_parameters();

  CheckpointExtras extras;
  extras.optimizer = &optimizer;
  extras.scheduler = scheduler.get();
  extras.generators = {{"default", &default_generator()}, {"data", &data_generator}};

  TrainState start;
  Reporter reporter(is_main, o.steps, 0, 0);
  RunFiles files;
  if (o.resume) {
    start = resume(o, job, ckpt, config, params, extras, data_generator, train_loader, files);
    reporter = Reporter(is_main, o.steps, start.step, start.tokens_seen);
    reporter.line("resumed " + ckpt + " at step " + std::to_string(start.step));
  }
  auto save_state = [&](const TrainState& state) {
    save(job, ckpt, config, params, extras, train_loader, state);
  };

  if (is_main) {
    std::ostringstream head;
    head << kProgram << ": preset " << o.preset << ", " << model.num_parameters()
         << " parameters, tokenizer " << p.tokenizer << ", data " << o.data << " (" << text.size()
         << " bytes: " << train_ds.size() << " training and " << val_ds.size()
         << " validation windows of " << T << " tokens), batch " << p.batch_size << ", lr " << p.lr
         << ", " << o.steps << " steps, " << o.threads << " thread(s), matmul precision "
         << o.matmul_precision << (bf16_products() ? " (bf16 products)" : "");
    if (job.world_size() > 1)
      head << ", " << job.world_size() << " processes (global batch " << global_batch << ")"
           << (job.optimizer_sharded() ? ", AdamW's state sharded (ZeRO stage 1)" : "");
    reporter.line(head.str());
  }

  TrainOptions options;
  options.num_epochs = std::numeric_limits<int64_t>::max();
  options.max_steps = o.steps;
  options.eval_freq = o.eval_freq;
  options.eval_iter = o.eval_iter;
  // A sharded optimiser clips inside its step (no process holds the whole averaged gradient),
  // with clip_grad_norm_'s bits.
  options.max_grad_norm = job.clip_in_step(o.clip) ? 0.0 : o.clip;
  options.start_context = o.prompt;
  options.sample_tokens = o.sample_tokens;
  options.rank = job.rank();
  options.world_size = job.world_size();
  if (job.world_size() > 1) {
    // The average overlaps backward: each bucket is reduced once backward has finished it.
    options.before_backward = [&](const Tape& t) { return job.backward_options(t); };
    options.after_backward = [&] { job.average_gradients(); };
  }

  StepClock clock([&] { return job.allreduce_seconds(); });
  TrainCallbacks callbacks;
  callbacks.on_step = [&](const TrainProgress& pr) {
    clock.step((pr.step - 1) % o.eval_freq == 0 || pr.step == o.steps);
    reporter.step(pr);
    if (o.checkpoint_every > 0 && pr.step % o.checkpoint_every == 0 && pr.step < o.steps) {
      if (is_main) files.write(o.out);
      save_state({pr.step, pr.epoch, pr.tokens_seen});  // every process: see save()
    }
    clock.resume();  // the checkpoint is not a step's time
  };
  callbacks.on_eval = [&](const TrainProgress& pr, const EvalLosses& l) {
    reporter.eval(pr, l);
    char row[160];
    std::snprintf(row, sizeof row, "%" PRId64 ",%.17g,%.17g,%" PRId64 "\n", pr.step, l.train_loss,
                  l.val_loss, pr.tokens_seen);
    files.csv += row;
  };
  callbacks.on_sample = [&](const TrainProgress& pr, const std::string& sample) {
    std::string flat = sample;
    for (char& c : flat)
      if (c == '\n') c = ' ';
    reporter.line("sample after epoch " + std::to_string(pr.epoch + 1) + ": " + flat);
    files.samples += "=== epoch " + std::to_string(pr.epoch + 1) + ", step " +
                     std::to_string(pr.step) + " ===\n" + sample + "\n";
  };

  const auto t0 = std::chrono::steady_clock::now();
  TrainState end = train_model_simple(model, train_loader, train_eval_loader, val_loader, optimizer,
                                      scheduler.get(), *tokenizer, options, callbacks, start);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (is_main) files.write(o.out);
  save_state(end);  // every process, as above
  if (is_main) {
    std::ostringstream s;
    s << "trained steps " << start.step + 1 << ".." << end.step << " in " << std::fixed
      << std::setprecision(1) << seconds << " s; wrote " << o.out << "/loss.csv, " << o.out
      << "/samples.txt, " << ckpt;
    reporter.line(s.str());
    const std::string speed = clock.line(global_batch * T, job.world_size(), o.threads);
    if (!speed.empty()) reporter.line(speed);
    if (o.plot) {
      const apps::LossRows rows = apps::loss_rows(files.csv);
      apps::try_plot(o.out + "/loss.png", kProgram, [&] {
        plot_values(o.out + "/loss.png", rows.steps, rows.tokens, rows.train, rows.val, "loss",
                    "Tokens seen");
      });
      plot_last_block_attention(model, *tokenizer, o.prompt, o.out);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "Trains chapter 4's GPT on a text file as chapter 5 of Build a Large Language "
      "Model (From Scratch) does (AdamW, train/val loss, samples, checkpoints). Writes loss.csv, "
      "samples.txt, loss.png and checkpoint.safetensors into --out.",
      kProgram};
  // A repeated option takes its last value, so a script's options can be overridden.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--preset", o.preset,
                 "model size: tiny (bytes tokenizer, C 128, 2 layers), small (gpt2, C 384, 6 "
                 "layers) or 124M (the book's GPT_CONFIG_124M, context 256)");
  app.add_option("--data", o.data,
                 "a UTF-8 text file to train on (default: the King James Bible that "
                 "tools/kjv_text.sh writes from Debian's bible-kjv-text)");
  app.add_option("--steps", o.steps, "optimiser steps in all (across epochs)")
      ->check(cli::positive());
  app.add_option("--out", o.out, "output folder (created when missing)")->required();
  app.add_flag("--resume", o.resume,
               "continue from OUT/checkpoint.safetensors (same options), bit for bit");
  app.add_option("--tokenizer", o.tokenizer,
                 "gpt2 (GPT-2's BPE; files from tools/fetch_gpt2_vocab.sh) or bytes (256 ids); "
                 "default: the preset's")
      ->check(CLI::IsMember({"gpt2", "bytes"}));
  app.add_option("--threads", o.threads, "threads per step")->check(cli::in_range(1, 256));
  cli::add_matmul_precision(app, o.matmul_precision);
  app.add_option("--seed", o.seed,
                 "torch.manual_seed for the weights and dropout; the data "
                 "loader's generator gets the same seed");
  app.add_option("--eval-freq", o.eval_freq, "evaluate after steps 1, 1+N, 1+2N, ... and the last")
      ->check(cli::positive());
  app.add_option("--eval-iter", o.eval_iter, "batches of each split per evaluation")
      ->check(cli::positive());
  app.add_option("--checkpoint-every", o.checkpoint_every,
                 "save a checkpoint every N steps (0: only at the end)")
      ->check(cli::non_negative());
  app.add_flag("--checkpoint-activations", o.checkpoint_activations,
               "recompute each transformer block in backward instead of keeping its "
               "activations (less memory, the same results)");
  app.add_option("--context-length", o.context_length, "override the preset: tokens per window (T)")
      ->check(cli::positive());
  app.add_option("--emb-dim", o.emb_dim, "override the preset: embedding size C")
      ->check(cli::positive());
  app.add_option("--n-heads", o.n_heads, "override the preset: attention heads (divide C)")
      ->check(cli::positive());
  app.add_option("--n-layers", o.n_layers, "override the preset: transformer blocks")
      ->check(cli::positive());
  app.add_option("--batch-size", o.batch_size, "override the preset: sequences per batch")
      ->check(cli::positive());
  app.add_option("--lr", o.lr, "override the preset: peak learning rate")
      ->check(cli::positive_finite());
  app.add_option("--drop-rate", o.drop_rate, "override the preset's dropout (0.1)")
      ->check(cli::probability());
  app.add_option("--weight-decay", o.weight_decay, "AdamW's weight decay")
      ->check(cli::non_negative_finite());
  app.add_option("--warmup", o.warmup,
                 "linear warm-up steps, then cosine decay to --min-lr (0: constant lr)")
      ->check(cli::non_negative());
  app.add_option("--min-lr", o.min_lr, "the cosine's final lr")->check(cli::non_negative_finite());
  app.add_option("--clip", o.clip, "clip_grad_norm_ max norm (0: no clipping)")
      ->check(cli::non_negative_finite());
  app.add_flag("--shard-optimizer", o.shard_optimizer,
               "under mpirun, shard AdamW's state over the processes (ZeRO stage 1: the same "
               "weights, 1/N of the moments each)");
  app.add_option("--train-ratio", o.train_ratio, "share of the text for training")
      ->check(cli::in_range(0, 1));
  app.add_option("--prompt", o.prompt, "start of the sample generated after each epoch");
  app.add_option("--sample-tokens", o.sample_tokens, "tokens per sample")
      ->check(cli::non_negative());
  app.add_flag("!--no-plot", o.plot, "do not run gnuplot for loss.png");
  if (const std::optional<int> exit_code = cli::parse(app, argc, argv)) return *exit_code;
  // Under mpirun, one process of a data-parallel job; a process that fails ends the whole job
  // with its message instead of leaving the others waiting in the next gradient average.
  dist::Job job(argc, argv);
  return job.run(
      [&] {
        try {
          return run(o, job);
        } catch (const std::exception& e) {  // every message begins with the program's name
          throw Error(cli::error_message(kProgram, e.what()));
        }
      },
      2);
}
