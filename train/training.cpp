// Chapter 5's training loop (train/training.h): losses, evaluation, greedy samples, the loop.
#include <tapegrad/train/training.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/nn/generate.h>
#include <tapegrad/ops/ops.h>
#include <tapegrad/optim/clip.h>
#include <tapegrad/optim/optimizer.h>
#include <tapegrad/optim/schedule.h>

namespace tapegrad {

template <class Model>
Tensor calc_loss_batch(const Ids& input_batch, const Ids& target_batch, const Model& model) {
  if (input_batch.shape() != target_batch.shape()) {
    throw Error("calc_loss_batch: input_batch " + input_batch.shape().str() + " and target_batch " +
                target_batch.shape().str() + " differ in shape");
  }
  Tensor logits = model(input_batch);  // [B, T, V]
  const int64_t rows = logits.shape().size(0) * logits.shape().size(1);
  const int64_t vocab = logits.shape().size(2);
  Tensor flat = reshape(logits, {rows, vocab});  // [B·T, V]
  return cross_entropy(flat, target_batch.values());
}

template <class Model>
double calc_loss_loader(BatchLoader& loader, const Model& model, int64_t num_batches) {
  if (loader.size() == 0) return std::numeric_limits<double>::quiet_NaN();
  const int64_t n = num_batches < 0 ? loader.size() : std::min(num_batches, loader.size());
  Tape tape;
  TapeScope scope(tape);
  NoGradGuard no_grad;
  Ids inputs, targets;
  double total = 0.0;
  loader.begin_epoch();
  for (int64_t i = 0; i < n; ++i) {
    if (!loader.next(inputs, targets)) break;
    tape.reset();
    total += calc_loss_batch(inputs, targets, model).item();
  }
  return total / static_cast<double>(n);
}

template <class Model>
EvalLosses evaluate_model(const Model& model, BatchLoader& train_loader, BatchLoader& val_loader,
                          int64_t eval_iter) {
  // Module::train is not const: the mode is a flag, not the model's values.
  auto& mutable_model = const_cast<Model&>(model);
  const bool was_training = model.training();
  mutable_model.eval();
  EvalLosses losses;
  losses.train_loss = calc_loss_loader(train_loader, model, eval_iter);
  losses.val_loss = calc_loss_loader(val_loader, model, eval_iter);
  mutable_model.train(was_training);
  return losses;
}

template <class Model>
std::string generate_sample(const Model& model, const Tokenizer& tokenizer,
                            const std::string& start_context, int64_t max_new_tokens) {
  std::vector<int64_t> encoded = tokenizer.encode(start_context);
  if (encoded.empty()) return start_context;
  auto& mutable_model = const_cast<Model&>(model);
  const bool was_training = model.training();
  mutable_model.eval();
  const int64_t n = static_cast<int64_t>(encoded.size());
  const Ids out = nn::generate_text_simple(model, Ids(Shape{1, n}, std::move(encoded)),
                                           max_new_tokens, model.config().context_length);
  mutable_model.train(was_training);
  return tokenizer.decode(out.values());
}

template <class Model>
double train_step(Model& model, const Ids& input_batch, const Ids& target_batch,
                  Optimizer& optimizer, double max_grad_norm, Tape& tape, double* grad_norm,
                  const std::function<void()>& after_backward,
                  const std::function<BackwardOptions(const Tape&)>& before_backward) {
  tape.reset();  // a fresh graph each step; the parameters keep their values
  optimizer.zero_grad();
  Tensor loss = calc_loss_batch(input_batch, target_batch, model);  // []
  loss.backward(before_backward ? before_backward(tape) : BackwardOptions{});
  if (after_backward) after_backward();  // data parallelism: the average over processes
  double norm = 0.0;
  if (max_grad_norm > 0.0) norm = clip_grad_norm_(optimizer, max_grad_norm);
  if (grad_norm != nullptr) *grad_norm = norm;
  optimizer.step();
  return loss.item();
}

RowShard shard_range(int64_t rows, int rank, int world_size) {
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw Error("shard_range: rank " + std::to_string(rank) + " of " + std::to_string(world_size) +
                " processes");
  }
  if (rows % world_size != 0) {
    throw Error("shard_range: a global batch of " + std::to_string(rows) +
                " rows does not split evenly over " + std::to_string(world_size) + " processes");
  }
  const int64_t share = rows / world_size;
  return RowShard{rank * share, (rank + 1) * share};
}

void shard_rows(const Ids& batch, int rank, int world_size, Ids& shard) {
  const int64_t rows = batch.size(0), cols = batch.numel() / std::max<int64_t>(rows, 1);
  const RowShard mine = shard_range(rows, rank, world_size);
  shard.assign(Shape{mine.end - mine.begin, cols},
               batch.values().subspan(static_cast<size_t>(mine.begin * cols),
                                      static_cast<size_t>((mine.end - mine.begin) * cols)));
}

template <class Model>
TrainState train_model_simple(Model& model, BatchLoader& train_loader,
                              BatchLoader& train_eval_loader, BatchLoader& val_loader,
                              Optimizer& optimizer, LRScheduler* scheduler,
                              const Tokenizer& tokenizer, const TrainOptions& options,
                              const TrainCallbacks& callbacks, TrainState start) {
  if (options.eval_freq < 1) {
    throw Error("train_model_simple: eval_freq must be >= 1, got " +
                std::to_string(options.eval_freq));
  }
  if (options.eval_iter < 1) {
    throw Error("train_model_simple: eval_iter must be >= 1, got " +
                std::to_string(options.eval_iter));
  }
  Tape tape;
  TapeScope scope(tape);
  Ids inputs, targets, my_inputs, my_targets;
  TrainState state = start;
  TrainProgress progress;
  auto done = [&] { return options.max_steps >= 0 && state.step >= options.max_steps; };
  auto sample = [&] {
    if (options.start_context.empty() || !callbacks.on_sample) return;
    callbacks.on_sample(
        progress, generate_sample(model, tokenizer, options.start_context, options.sample_tokens));
  };
  model.train();
  bool stepped_in_epoch = false;
  while (state.epoch < options.num_epochs && !done()) {
    if (!train_loader.next(inputs, targets)) {  // the epoch ended
      if (state.step > 0) sample();
      stepped_in_epoch = false;
      ++state.epoch;
      continue;
    }
    progress.lr = optimizer.lr(0);
    const bool sharded = options.world_size > 1;
    if (sharded) {
      shard_rows(inputs, options.rank, options.world_size, my_inputs);
      shard_rows(targets, options.rank, options.world_size, my_targets);
    }
    progress.loss = train_step(model, sharded ? my_inputs : inputs, sharded ? my_targets : targets,
                               optimizer, options.max_grad_norm, tape, &progress.grad_norm,
                               options.after_backward, options.before_backward);
    if (scheduler != nullptr) scheduler->step();
    stepped_in_epoch = true;
    ++state.step;
    state.tokens_seen += inputs.numel();
    progress.step = state.step;
    progress.epoch = state.epoch;
    progress.tokens_seen = state.tokens_seen;
    if ((state.step - 1) % options.eval_freq == 0 || done()) {
      const EvalLosses losses =
          evaluate_model(model, train_eval_loader, val_loader, options.eval_iter);
      if (callbacks.on_eval) callbacks.on_eval(progress, losses);
    }
    if (callbacks.on_step) callbacks.on_step(progress);
  }
  if (done() && stepped_in_epoch) sample();  // stopped mid-epoch: a last sample
  return state;
}

// The models chapters 5-7 train: the book's GPT, and its Qwen3 and Llama 3.2.
#define TAPEGRAD_TRAINING_FOR(Model)                                                             \
  template Tensor calc_loss_batch(const Ids&, const Ids&, const Model&);                         \
  template double calc_loss_loader(BatchLoader&, const Model&, int64_t);                         \
  template EvalLosses evaluate_model(const Model&, BatchLoader&, BatchLoader&, int64_t);         \
  template std::string generate_sample(const Model&, const Tokenizer&, const std::string&,       \
                                       int64_t);                                                 \
  template double train_step(Model&, const Ids&, const Ids&, Optimizer&, double, Tape&, double*, \
                             const std::function<void()>&,                                       \
                             const std::function<BackwardOptions(const Tape&)>&);                \
  template TrainState train_model_simple(Model&, BatchLoader&, BatchLoader&, BatchLoader&,       \
                                         Optimizer&, LRScheduler*, const Tokenizer&,             \
                                         const TrainOptions&, const TrainCallbacks&, TrainState);
TAPEGRAD_TRAINING_FOR(nn::GPTModel)
TAPEGRAD_TRAINING_FOR(nn::Qwen3Model)
TAPEGRAD_TRAINING_FOR(nn::Llama3Model)
#undef TAPEGRAD_TRAINING_FOR

}  // namespace tapegrad
