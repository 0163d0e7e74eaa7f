// Chapter 6's classification fine-tuning (train/classifier.h): the checks of its templates.
#include <tapegrad/train/classifier.h>

#include <string>

#include <tapegrad/graph/error.h>

namespace tapegrad::classifier {

void check_batch(const char* fn, const Ids& input_batch, const Ids& target_batch) {
  if (target_batch.rank() != 1 || input_batch.rank() != 2 ||
      target_batch.size(0) != input_batch.size(0)) {
    throw Error(std::string(fn) + ": input_batch " + input_batch.shape().str() +
                " must be [B, T] and target_batch " + target_batch.shape().str() +
                " [B] (one class per sequence)");
  }
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
