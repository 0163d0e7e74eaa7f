// The models tapegrad-dot draws: the chapter-3 attention models and the chapter-4 GPT, the
// library's modules (nn/attention.h, nn/gpt.h) built with the book's seeds, each
// recording its forward (and a loss) on a tape, one NameScope per module, layer and head, so the
// drawing gets its clusters.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/nn/gpt.h>

namespace tapegrad::tools {

// The book's sizes: a batch of two copies of "Your journey starts with one step" (6 tokens,
// 3-dim embeddings), d_out 2, 2 heads, dropout 0.0 (§3.5-3.6).
struct ModelSizes {
  int64_t batch = 2;
  int64_t seq = 6;  // tokens, and the context length of the causal models
  int64_t d_in = 3;
  int64_t d_out = 2;
  int64_t heads = 2;
  double dropout = 0.0;
  int64_t seed = -1;  // -1: the book's torch.manual_seed for that model (123, or 789 for v2)

  // "gpt" reads only these, batch and seed: the model's config (the book's GPT_CONFIG_124M) and
  // tokens per sequence (the book's §5.1.2 batch "every effort moves" / "I really like" is 2 x 3).
  nn::GPTConfig gpt = nn::GPT_CONFIG_124M;
  int64_t tokens = 3;
};

// "simplified", "self-attention-v1", "self-attention-v2", "causal", "multihead-wrapper",
// "multihead", "gpt", in the book's order.
std::span<const std::string_view> model_names();

struct BuiltModel {
  std::string title;                  // e.g. "MultiHeadAttention (§3.6.2)"
  std::string description;            // the sizes and the loss, for the drawing's heading
  std::vector<Parameter> parameters;  // in the book's creation order
  Tensor output;                      // the model's output (context vectors, or logits)
  Tensor loss;  // a scalar to run backward from: sum(output), or gpt's cross entropy
};

// Records the model's forward pass and loss on `tape` (its parameters drawn from a generator
// seeded as the book seeds it). Throws Error for an unknown model name or sizes the model
// cannot take (d_out not divisible by heads, a size below 1, dropout outside [0, 1), more gpt
// tokens than its context length). "gpt" in its 124M config allocates ~650 MB of weights.
BuiltModel build_model(Tape& tape, std::string_view name, const ModelSizes& sizes = {});

}  // namespace tapegrad::tools
