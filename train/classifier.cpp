// Chapter 6's classification losses, accuracy and training step (train/classifier.h).
#include <tapegrad/train/classifier.h>

#include <tapegrad/graph/error.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad::classifier {

Tensor last_token_logits(const nn::GPTModel& model, const Ids& input_batch) {
  Tensor logits = model(input_batch);            // [B, T, K]
  return select(logits, 1, logits.size(1) - 1);  // [B, K]
}

Tensor calc_loss_batch(const Ids& input_batch, const Ids& target_batch, const nn::GPTModel& model) {
  if (target_batch.rank() != 1 || input_batch.rank() != 2 ||
      target_batch.size(0) != input_batch.size(0)) {
    throw Error("classifier::calc_loss_batch: input_batch " + input_batch.shape().str() +
                " must be [B, T] and target_batch " + target_batch.shape().str() +
                " [B] (one class per sequence)");
  }
  return cross_entropy(last_token_logits(model, input_batch), target_batch.values());  // []
}

int64_t count_correct(const Ids& input_batch, const Ids& target_batch, const nn::GPTModel& model) {
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

double train_step(nn::GPTModel& model, const Ids& input_batch, const Ids& target_batch,
                  Optimizer& optimizer, Tape& tape) {
  tape.reset();
  optimizer.zero_grad();
  Tensor loss = calc_loss_batch(input_batch, target_batch, model);  // []
  loss.backward();
  optimizer.step();
  return loss.item();
}

void check_options(const Options& options) {
  if (options.num_epochs < 0) {
    throw Error("train_classifier_simple: num_epochs must be >= 0, got " +
                std::to_string(options.num_epochs));
  }
  if (options.eval_freq < 1) {
    throw Error("train_classifier_simple: eval_freq must be >= 1, got " +
                std::to_string(options.eval_freq));
  }
  if (options.eval_iter < 1) {
    throw Error("train_classifier_simple: eval_iter must be >= 1, got " +
                std::to_string(options.eval_iter));
  }
}

}  // namespace tapegrad::classifier
