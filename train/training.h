// Chapter 5's training loop as library functions: calc_loss_batch, calc_loss_loader,
// evaluate_model and train_model_simple (ch05/01_main-chapter-code); generation is
// nn/generate.h. `Model` is nn::GPTModel, or nn::Qwen3Model / nn::Llama3Model (the book's Qwen3
// README calls its Qwen3Model a drop-in for chapters 5-7's code): the functions are instantiated
// in train/training.cpp for those three.
//
// Dimension names: B batch, T tokens, V vocabulary.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <tapegrad/graph/ids.h>
#include <tapegrad/nn/gpt.h>
#include <tapegrad/nn/llama3.h>
#include <tapegrad/nn/qwen3.h>
#include <tapegrad/text/dataset.h>
#include <tapegrad/text/tokenizer.h>

namespace tapegrad {

class LRScheduler;
class Optimizer;

// cross_entropy(logits.flatten(0, 1), targets.flatten()) of the model's logits for input_batch:
// the mean loss over all B·T positions, a [] tensor on the current tape.
template <class Model>
Tensor calc_loss_batch(const Ids& input_batch, const Ids& target_batch, const Model& model);

// The mean of calc_loss_batch over the first num_batches batches of one pass of the loader
// (every batch when num_batches < 0 or larger than the loader), as the book's calc_loss_loader:
// it starts a new epoch of the loader (iter(data_loader)), so a shuffled loader draws its order.
// Computed under NoGradGuard on a scratch tape. NaN for a loader with no batch (the book's
// float("nan")).
template <class Model>
double calc_loss_loader(BatchLoader& loader, const Model& model, int64_t num_batches = -1);

struct EvalLosses {
  double train_loss = 0.0;
  double val_loss = 0.0;
};

// The book's evaluate_model: eval mode, eval_iter batches of each loader, then train mode again.
template <class Model>
EvalLosses evaluate_model(const Model& model, BatchLoader& train_loader, BatchLoader& val_loader,
                          int64_t eval_iter);

// The book's generate_and_print_sample, returning the text: eval mode, greedy continuation of
// start_context by max_new_tokens tokens, train mode again. Newlines are kept.
template <class Model>
std::string generate_sample(const Model& model, const Tokenizer& tokenizer,
                            const std::string& start_context, int64_t max_new_tokens = 50);

// What train_model_simple reports.
struct TrainProgress {
  int64_t step = 0;         // optimiser steps done (1 after the first)
  int64_t epoch = 0;        // 0-based epoch of that step
  int64_t tokens_seen = 0;  // input tokens trained on so far
  double loss = 0.0;        // this step's training-batch loss
  double lr = 0.0;          // the lr this step used (first group)
  double grad_norm = 0.0;   // the total gradient norm before clipping (0 when not clipping)
};

struct TrainCallbacks {
  // After every optimiser step (and the scheduler's step). Checkpoints go here.
  std::function<void(const TrainProgress&)> on_step{};
  // After each evaluation: the step's progress and evaluate_model's losses.
  std::function<void(const TrainProgress&, const EvalLosses&)> on_eval{};
  // After each epoch (and at the end of training when it stops mid-epoch): the sample text.
  std::function<void(const TrainProgress&, const std::string&)> on_sample{};
};

struct TrainOptions {
  int64_t num_epochs = 1;       // epochs through train_loader
  int64_t max_steps = -1;       // stop after this many optimiser steps in all (< 0: no limit)
  int64_t eval_freq = 5;        // evaluate after steps 1, 1 + eval_freq, ... (the book's
                                // global_step % eval_freq == 0 with global_step from 0)
  int64_t eval_iter = 5;        // batches per loader and evaluation
  double max_grad_norm = 0.0;   // > 0: clip_grad_norm_ to this before each optimiser step
  std::string start_context{};  // the sample's prompt (empty: no samples)
  int64_t sample_tokens = 50;   // tokens generated per sample
  // Data parallelism (dist/data_parallel.h): this process is `rank` of `world_size`; each batch
  // of train_loader is the global batch, of which this process trains on rows
  // [rank·B/N, (rank + 1)·B/N) (B must be a multiple of N); after_backward runs between backward
  // and clipping (DataParallel::average_gradients). Evaluation runs the same batches on every
  // process, so every process computes the same losses.
  // before_backward, when given, makes the options of each step's backward (an overlapped
  // average: dist::Job::backward_options).
  int rank = 0;
  int world_size = 1;
  std::function<void()> after_backward{};
  std::function<BackwardOptions(const Tape&)> before_backward{};
};

// Where a run starts: fresh (all zero) or from a checkpoint. The caller restores the model,
// optimiser, scheduler, generators and train_loader's position (DataLoader::restore_epoch).
struct TrainState {
  int64_t step = 0;   // optimiser steps already done
  int64_t epoch = 0;  // the epoch train_loader is in
  int64_t tokens_seen = 0;
};

// The book's train_model_simple with the appendix-D extras: per batch zero_grad, forward,
// backward, optional clip_grad_norm_, optimizer.step(), scheduler->step() (when given);
// evaluate_model on train_eval_loader / val_loader every eval_freq steps; a sample after each
// epoch. train_eval_loader is a second loader over the training set (the book iterates
// train_loader afresh; a DataLoader holds one iteration, so evaluation gets its own, sharing the
// generator to draw what torch draws). Each step resets `tape` once and records on it: steady
// state steps allocate nothing else (the loader refills its Ids in place). Returns the state at
// the end. One training step is train_step() below, so a data-parallel gradient average can go
// between its backward and its clipping.
template <class Model>
TrainState train_model_simple(Model& model, BatchLoader& train_loader,
                              BatchLoader& train_eval_loader, BatchLoader& val_loader,
                              Optimizer& optimizer, LRScheduler* scheduler,
                              const Tokenizer& tokenizer, const TrainOptions& options,
                              const TrainCallbacks& callbacks = {}, TrainState start = {});

// One optimiser step on one batch: tape.reset(), zero_grad, forward, backward, clipping (when
// max_grad_norm > 0; the norm goes to *grad_norm), optimizer.step(). Returns the batch loss.
template <class Model>
double train_step(Model& model, const Ids& input_batch, const Ids& target_batch,
                  Optimizer& optimizer, double max_grad_norm, Tape& tape,
                  double* grad_norm = nullptr, const std::function<void()>& after_backward = {},
                  const std::function<BackwardOptions(const Tape&)>& before_backward = {});

// Data parallelism's one batch-sharding rule: process `rank` of `world_size` (N) trains on rows
// [begin, end) = [rank·B/N, (rank + 1)·B/N) of a global batch of B rows. Every process must see
// as many rows (gradients are averaged with equal weights): throws Error unless N divides B.
struct RowShard {
  int64_t begin;
  int64_t end;
};
RowShard shard_range(int64_t rows, int rank, int world_size);

// The rows shard_range gives of a [B, T] batch, into `shard` (storage reused).
void shard_rows(const Ids& batch, int rank, int world_size, Ids& shard);

}  // namespace tapegrad
