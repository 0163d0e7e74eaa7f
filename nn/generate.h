// Text generation with a GPTModel (and Qwen3Model / Llama3Model, at the end): the book's
// generate_text_simple (chapter 4, greedy) and chapter 5's generate (temperature, top-k,
// end-of-sequence id, sampling).
//
// Both run the model under NoGradGuard on a Tape of their own, reset before every step, so a
// call leaves the caller's tape untouched and its memory stays that of one forward pass: the
// model's generation tape (GPTModel::acquire_generation_tape), whose memory the next call reuses,
// or a new one when another call holds it. The
// model is used in the mode it is in: call model.eval() first, as the book does (in training
// mode dropout draws from its generator, as in torch). Each step crops the context to the last
// context_size tokens (the book's idx[:, -context_size:]), so prompts longer than the model's
// context_length are fine when context_size ≤ context_length.
//
// By default both use the model's KV cache (ch04/03_kv-cache): the prompt's last context_size
// tokens in one pass (prefill), then one new token per step (decode), the output head computed
// for the last position only. While the sequence fits in context_size, that is exactly what
// the uncached loop computes; once it is longer, each step resets the cache and prefills the
// last context_size tokens again, as the uncached loop does, so the ids are the same with and
// without the cache. The model's cache is reset before and after the call. In training mode
// with dropout (where the cache refuses to run) the uncached loop runs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/nn/gpt.h>
#include <tapegrad/nn/llama3.h>
#include <tapegrad/nn/qwen3.h>

namespace tapegrad::nn {

// The most tokens one call generates per row: 2^24, 128 MiB of ids per row, weeks of decoding on
// a CPU. A larger max_new_tokens is an Error rather than an allocation that cannot succeed.
inline constexpr int64_t kMaxNewTokens = int64_t{1} << 24;

// §4.7: ids [B, T] -> [B, T + max_new_tokens], each new token the argmax of the last position's
// logits (the first maximum, as torch.argmax). Throws Error, before running the model, unless
// ids is [B, T] with B, T ≥ 1 and every id in [0, vocab_size), 0 ≤ max_new_tokens ≤
// kMaxNewTokens and 1 ≤ context_size ≤ context_length.
Ids generate_text_simple(const GPTModel& model, const Ids& ids, int64_t max_new_tokens,
                         int64_t context_size, bool use_cache = true);

// §5.3: as generate_text_simple, but per step:
//  - top_k: logits below the k-th largest of their row become -inf (the book's
//    torch.where(logits < min_val, -inf, logits), with min_val taken per row);
//  - temperature > 0: logits / temperature, softmax, then torch.multinomial(probs, 1) drawn from
//    `generator` (torch's exponential-race stream: the same seed gives torch's ids);
//    temperature == 0: argmax;
//  - eos_id: generation stops, without appending it, when every row's new id is eos_id (the
//    book's `if idx_next == eos_id: break`, which torch only accepts for one row).
// Throws Error, before running the model, on what generate_text_simple rejects and on a negative
// or non-finite temperature, top_k outside [1, vocab_size], or eos_id outside [0, vocab_size).
Ids generate(const GPTModel& model, const Ids& ids, int64_t max_new_tokens, int64_t context_size,
             double temperature = 0.0, std::optional<int64_t> top_k = std::nullopt,
             std::optional<int64_t> eos_id = std::nullopt,
             Generator& generator = default_generator(), bool use_cache = true);

// Where a generation's time went: the prefill (the first step, the prompt in one pass) and the
// decode steps after it, in seconds of wall-clock time, sampling included.
struct GenerationStats {
  int64_t prompt_tokens = 0;   // tokens of the prefill (per row)
  int64_t decode_tokens = 0;   // tokens produced by the steps after the prefill (per row)
  double prefill_seconds = 0;  // the first step: the prompt's forward and the first sampling
  double decode_seconds = 0;   // every step after it
};

// Everything generate takes, plus a callback and the timing.
struct GenerateOptions {
  int64_t max_new_tokens = 0;
  int64_t context_size = 0;  // 0: the model's context_length
  double temperature = 0.0;
  std::optional<int64_t> top_k;
  std::optional<int64_t> eos_id;
  Generator* generator = nullptr;  // nullptr: default_generator()
  bool use_cache = true;
  // Called once per step with the new ids [B, 1], as soon as they are drawn (to stream them).
  std::function<void(const Ids& next)> on_token;
  GenerationStats* stats = nullptr;  // filled when given
};

// generate, with its arguments as a struct.
Ids generate(const GPTModel& model, const Ids& ids, const GenerateOptions& options);

// The same loop for Qwen3 and Llama 3.2 (the book's kv_cache/generate.py with chapter 5's
// sampling): the cache is their GQAKVCache, reserved for the whole generation before the first
// step (min(context_size, T + max_new_tokens) positions), and the window handled as GPTModel's.
// context_size 0 is the model's context_length. The same checks and Errors.
Ids generate(const Qwen3Model& model, const Ids& ids, const GenerateOptions& options);
Ids generate(const Llama3Model& model, const Ids& ids, const GenerateOptions& options);
Ids generate_text_simple(const Qwen3Model& model, const Ids& ids, int64_t max_new_tokens,
                         int64_t context_size, bool use_cache = true);
Ids generate_text_simple(const Llama3Model& model, const Ids& ids, int64_t max_new_tokens,
                         int64_t context_size, bool use_cache = true);

}  // namespace tapegrad::nn
