// The config and input-id checks the language models share.
#include <tapegrad/nn/model_checks.h>

#include <tapegrad/graph/error.h>

namespace tapegrad::nn {

void check_positive(const char* config, const char* field, int64_t value) {
  if (value <= 0) {
    throw Error(std::string(config) + ": " + field + " " + std::to_string(value) +
                " must be positive");
  }
}

void check_token_ids(const std::string& model, const Ids& in_idx, int64_t context_length,
                     int64_t vocab_size, int64_t first_position) {
  if (in_idx.rank() != 2) {
    throw Error(model + ": in_idx " + in_idx.shape().str() + " must be [B, T] (batch, tokens)");
  }
  const int64_t T = in_idx.size(1);
  if (first_position + T > context_length) {
    if (first_position == 0) {
      throw Error(model + ": in_idx " + in_idx.shape().str() + " has " + std::to_string(T) +
                  " tokens, more than context_length " + std::to_string(context_length));
    }
    throw Error(model + ": in_idx " + in_idx.shape().str() + " at cache position " +
                std::to_string(first_position) + " would need positions up to " +
                std::to_string(first_position + T - 1) + ", past context_length " +
                std::to_string(context_length) + ": call reset_cache() and prefill again");
  }
  for (int64_t i = 0; i < in_idx.numel(); ++i) {
    if (in_idx[i] < 0 || in_idx[i] >= vocab_size) {
      throw Error(model + ": in_idx " + in_idx.shape().str() + ": id " + std::to_string(in_idx[i]) +
                  " at element " + std::to_string(i) + " is outside the vocabulary [0, " +
                  std::to_string(vocab_size) + ")");
    }
  }
}

}  // namespace tapegrad::nn
