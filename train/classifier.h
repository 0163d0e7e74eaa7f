// Chapter 6's classification fine-tuning as library functions (ch06/01_main-chapter-code):
// the logits of the last token, calc_loss_batch, calc_loss_loader, calc_accuracy_loader,
// evaluate_model and train_classifier_simple, in namespace tapegrad::classifier (chapter 5's
// functions of the same names, train/training.h, train a language model).
//
// A loader is anything with size() (batches per epoch), begin_epoch() (iter(loader)) and
// next(Ids& inputs, Ids& labels) (inputs [B, T] token ids, labels [B] class indices; false at
// the end of the epoch), as text/dataset.h's loaders.
//
// The model: nn::GPTModel as the book's chapter 6, or nn::Qwen3Model / nn::Llama3Model (the book's
// Qwen3 README calls its Qwen3Model a drop-in for chapters 5-7's code): any module whose call on
// [B, T] ids gives [B, T, K] logits (the LanguageModel concept), its out_head replaced by a
// Linear(emb_dim, K) as chapter 6 does.
//
// Dimension names: B batch, T tokens, K classes (the head's out_features).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include <string>
#include <utility>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/nn/gpt.h>
#include <tapegrad/nn/llama3.h>
#include <tapegrad/nn/qwen3.h>
#include <tapegrad/ops/ops.h>
#include <tapegrad/optim/optimizer.h>

namespace tapegrad::classifier {

template <class L>
concept Loader = requires(L& loader, Ids& inputs, Ids& labels) {
  { loader.size() } -> std::convertible_to<int64_t>;
  loader.begin_epoch();
  { loader.next(inputs, labels) } -> std::same_as<bool>;
};

// A model of token ids: model(ids [B, T]) -> logits [B, T, K], train() and eval().
template <class M>
concept LanguageModel = requires(M& m, const M& cm, const Ids& ids) {
  { cm(ids) } -> std::convertible_to<Tensor>;
  m.train();
  m.eval();
};

// model(input_batch)[:, -1, :]: the logits of each sequence's last token, [B, K].
template <LanguageModel M>
Tensor last_token_logits(const M& model, const Ids& input_batch) {
  Tensor logits = model(input_batch);            // [B, T, K]
  return select(logits, 1, logits.size(1) - 1);  // [B, K]
}

// Throws Error unless input_batch is [B, T] and target_batch [B].
void check_batch(const char* fn, const Ids& input_batch, const Ids& target_batch);

// cross_entropy(last_token_logits, target_batch): the mean loss over the batch, a [] tensor on
// the current tape. target_batch [B] holds class indices in [0, K).
template <LanguageModel M>
Tensor calc_loss_batch(const Ids& input_batch, const Ids& target_batch, const M& model) {
  check_batch("classifier::calc_loss_batch", input_batch, target_batch);
  return cross_entropy(last_token_logits(model, input_batch), target_batch.values());  // []
}

// The correct predictions (argmax of the last token's logits equal to the label) of one batch,
// computed without recording (NoGradGuard on a scratch tape).
template <LanguageModel M>
int64_t count_correct(const Ids& input_batch, const Ids& target_batch, const M& model) {
  Tape tape;
  TapeScope scope(tape);
  NoGradGuard no_grad;
  const Ids predicted = argmax(last_token_logits(model, input_batch), -1);  // [B]
  if (predicted.numel() != target_batch.numel()) {
    throw Error("classifier::count_correct: " + std::to_string(predicted.numel()) +
                " predictions for target_batch " + target_batch.shape().str());
  }
  int64_t correct = 0;
  for (int64_t i = 0; i < predicted.numel(); ++i) correct += predicted[i] == target_batch[i];
  return correct;
}

// The book's calc_accuracy_loader: eval mode, the first num_batches batches (all when
// num_batches < 0 or more than the loader has), correct / examples. The model stays in eval
// mode, as the book's does. NaN for a loader with no batch.
template <Loader L, LanguageModel M>
double calc_accuracy_loader(L& loader, M& model, int64_t num_batches = -1) {
  model.eval();
  const int64_t size = static_cast<int64_t>(loader.size());
  if (size == 0) return std::numeric_limits<double>::quiet_NaN();
  const int64_t n = num_batches < 0 ? size : std::min(num_batches, size);
  Ids inputs, labels;
  int64_t correct = 0, examples = 0;
  loader.begin_epoch();
  for (int64_t i = 0; i < n && loader.next(inputs, labels); ++i) {
    correct += classifier::count_correct(inputs, labels, model);
    examples += inputs.size(0);
  }
  return static_cast<double>(correct) / static_cast<double>(examples);
}

// The mean of calc_loss_batch over the first num_batches batches (as calc_accuracy_loader),
// without recording. NaN for a loader with no batch (the book's float("nan")).
template <Loader L, LanguageModel M>
double calc_loss_loader(L& loader, const M& model, int64_t num_batches = -1) {
  const int64_t size = static_cast<int64_t>(loader.size());
  if (size == 0) return std::numeric_limits<double>::quiet_NaN();
  const int64_t n = num_batches < 0 ? size : std::min(num_batches, size);
  Tape tape;
  TapeScope scope(tape);
  NoGradGuard no_grad;
  Ids inputs, labels;
  double total = 0.0;
  loader.begin_epoch();
  for (int64_t i = 0; i < n && loader.next(inputs, labels); ++i) {
    tape.reset();
    total += classifier::calc_loss_batch(inputs, labels, model).item();
  }
  return total / static_cast<double>(n);
}

struct EvalLosses {
  double train_loss = 0.0;
  double val_loss = 0.0;
};

// The book's evaluate_model: eval mode, eval_iter batches of each loader, then train mode.
template <Loader L1, Loader L2, LanguageModel M>
EvalLosses evaluate_model(M& model, L1& train_loader, L2& val_loader, int64_t eval_iter) {
  model.eval();
  EvalLosses losses{classifier::calc_loss_loader(train_loader, model, eval_iter),
                    classifier::calc_loss_loader(val_loader, model, eval_iter)};
  model.train();
  return losses;
}

// What train_classifier_simple returns: the book's five lists.
struct History {
  std::vector<double> train_losses, val_losses;  // one per evaluation
  std::vector<double> train_accs, val_accs;      // one per epoch
  int64_t examples_seen = 0;
};

struct Options {
  int64_t num_epochs = 5;  // the book's chapter-6 run
  int64_t eval_freq = 50;  // evaluate after global steps 0, eval_freq, 2·eval_freq, ...
  int64_t eval_iter = 5;   // batches per loader for each evaluation and accuracy
};

// After each evaluation (epoch from 0, the global step from 0) and each epoch's accuracies.
struct Callbacks {
  std::function<void(int64_t epoch, int64_t step, const EvalLosses&)> on_eval{};
  std::function<void(int64_t epoch, double train_accuracy, double val_accuracy)> on_epoch{};
};

// One optimiser step on one batch: tape.reset(), zero_grad, calc_loss_batch, backward, step.
// Returns the batch loss.
template <LanguageModel M>
double train_step(M& model, const Ids& input_batch, const Ids& target_batch, Optimizer& optimizer,
                  Tape& tape) {
  tape.reset();
  optimizer.zero_grad();
  Tensor loss = classifier::calc_loss_batch(input_batch, target_batch, model);  // []
  loss.backward();
  optimizer.step();
  return loss.item();
}

// Throws Error naming the option unless num_epochs >= 0, eval_freq >= 1 and eval_iter >= 1.
void check_options(const Options& options);

// The book's train_classifier_simple. train_eval_loader is a second loader over the training
// set, for the evaluations and accuracies (the book iterates train_loader afresh; a loader here
// holds one iteration at a time). The book's optimiser is AdamW(model.parameters(), lr=5e-5,
// weight_decay=0.1) (optim/adam.h; frozen parameters get no gradient and are skipped).
template <Loader L1, Loader L2, Loader L3, LanguageModel M>
History train_classifier_simple(M& model, L1& train_loader, L2& train_eval_loader, L3& val_loader,
                                Optimizer& optimizer, const Options& options = {},
                                const Callbacks& callbacks = {}) {
  check_options(options);
  History history;
  int64_t global_step = -1;
  Tape tape;
  TapeScope scope(tape);
  Ids inputs, labels;
  for (int64_t epoch = 0; epoch < options.num_epochs; ++epoch) {
    model.train();
    train_loader.begin_epoch();
    while (train_loader.next(inputs, labels)) {
      classifier::train_step(model, inputs, labels, optimizer, tape);
      history.examples_seen += inputs.size(0);
      ++global_step;
      if (global_step % options.eval_freq == 0) {
        const EvalLosses losses =
            classifier::evaluate_model(model, train_eval_loader, val_loader, options.eval_iter);
        history.train_losses.push_back(losses.train_loss);
        history.val_losses.push_back(losses.val_loss);
        if (callbacks.on_eval) callbacks.on_eval(epoch, global_step, losses);
      }
    }
    const double train_accuracy =
        classifier::calc_accuracy_loader(train_eval_loader, model, options.eval_iter);
    const double val_accuracy =
        classifier::calc_accuracy_loader(val_loader, model, options.eval_iter);
    history.train_accs.push_back(train_accuracy);
    history.val_accs.push_back(val_accuracy);
    if (callbacks.on_epoch) callbacks.on_epoch(epoch, train_accuracy, val_accuracy);
  }
  return history;
}

}  // namespace tapegrad::classifier
