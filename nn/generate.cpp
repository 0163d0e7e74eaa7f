// Generation with a GPTModel: the book's generate_text_simple and chapter 5's generate.
#include <tapegrad/nn/generate.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad::nn {

namespace {

struct Sampling {
  double temperature = 0.0;
  std::optional<int64_t> top_k;
  std::optional<int64_t> eos_id;
};

// Everything checked before the model runs, so a bad call changes no generator.
template <class Model>
void check_arguments(const char* fn, const Model& model, const Ids& ids, int64_t max_new_tokens,
                     int64_t context_size, const Sampling& s) {
  const auto& cfg = model.config();
  const std::string where = std::string(fn) + ": ";
  if (ids.rank() != 2 || ids.size(0) < 1 || ids.size(1) < 1) {
    throw Error(where + "ids " + ids.shape().str() +
                " must be [B, T] (batch, tokens) with B >= 1 and T >= 1");
  }
  for (int64_t i = 0; i < ids.numel(); ++i) {
    if (ids[i] < 0 || ids[i] >= cfg.vocab_size) {
      throw Error(where + "ids " + ids.shape().str() + ": id " + std::to_string(ids[i]) +
                  " at element " + std::to_string(i) + " is outside the vocabulary [0, " +
                  std::to_string(cfg.vocab_size) + ")");
    }
  }
  if (max_new_tokens < 0 || max_new_tokens > kMaxNewTokens) {
    throw Error(where + "max_new_tokens " + std::to_string(max_new_tokens) + " must be in [0, " +
                std::to_string(kMaxNewTokens) + "] (nn::kMaxNewTokens)");
  }
  if (context_size < 1 || context_size > cfg.context_length) {
    throw Error(where + "context_size " + std::to_string(context_size) +
                " must be in [1, context_length " + std::to_string(cfg.context_length) + "]");
  }
  if (!(s.temperature >= 0.0) || !std::isfinite(s.temperature)) {
    throw Error(where + "temperature " + std::to_string(s.temperature) +
                " must be finite and >= 0 (0 picks the argmax)");
  }
  if (s.top_k && (*s.top_k < 1 || *s.top_k > cfg.vocab_size)) {
    throw Error(where + "top_k " + std::to_string(*s.top_k) + " must be in [1, vocab_size " +
                std::to_string(cfg.vocab_size) + "]");
  }
  if (s.eos_id && (*s.eos_id < 0 || *s.eos_id >= cfg.vocab_size)) {
    throw Error(where + "eos_id " + std::to_string(*s.eos_id) + " is outside the vocabulary [0, " +
                std::to_string(cfg.vocab_size) + ")");
  }
}

// Whether the cache must give way to the uncached loop: dropout drawn in training mode.
bool draws_dropout(const GPTModel& model) {
  return model.training() && model.config().drop_rate > 0.0;
}
template <class Model>
bool draws_dropout(const Model& model) {
  return model.training_with_dropout();
}

// Resets the model's cache when generation leaves, by return or by throw.
template <class Model>
struct CacheReset {
  const Model& model;
  ~CacheReset() { model.reset_cache(); }
};

// The model's generation tape for this call (GPTModel keeps one), or a tape of its own when the
// model keeps none or another call holds it.
template <class Model>
class GenerationTapeLease {
 public:
  explicit GenerationTapeLease(const Model& model) : model_(model) {
    if constexpr (requires { model.acquire_generation_tape(); }) {
      kept_ = model.acquire_generation_tape();
    }
    if (kept_ == nullptr) own_ = std::make_unique<Tape>();
  }
  ~GenerationTapeLease() {
    if constexpr (requires { model_.release_generation_tape(); }) {
      if (kept_ != nullptr) model_.release_generation_tape();
    }
  }
  GenerationTapeLease(const GenerationTapeLease&) = delete;
  GenerationTapeLease& operator=(const GenerationTapeLease&) = delete;
  Tape& tape() { return kept_ != nullptr ? *kept_ : *own_; }

 private:
  const Model& model_;
  Tape* kept_ = nullptr;
  std::unique_ptr<Tape> own_;
};

// The book's loop. `simple` is generate_text_simple: argmax of softmax(logits), as §4.7 writes
// it (softmax is monotonic, but torch takes the argmax of the rounded probabilities).
template <class Model>
Ids run(const Model& model, const Ids& ids, int64_t max_new_tokens, int64_t context_size,
        const Sampling& s, bool simple, Generator& generator, bool use_cache,
        const std::function<void(const Ids&)>& on_token, GenerationStats* stats) {
  using Clock = std::chrono::steady_clock;
  const int64_t B = ids.size(0);
  // The cache refuses training mode with dropout (it would need the uncached draws).
  use_cache = use_cache && !draws_dropout(model);
  // rows[b]: row b's ids so far; they grow by one per step.
  std::vector<std::vector<int64_t>> rows(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    const auto row = ids.values().subspan(static_cast<size_t>(b * ids.size(1)),
                                          static_cast<size_t>(ids.size(1)));
    rows[static_cast<size_t>(b)].reserve(static_cast<size_t>(ids.size(1) + max_new_tokens));
    rows[static_cast<size_t>(b)].assign(row.begin(), row.end());
  }
  // Not the caller's tape, so nothing leaks into it; reset every step. The model's, so the
  // memory the last generation faulted in is reused.
  GenerationTapeLease<Model> lease(model);
  Tape& tape = lease.tape();
  TapeScope use(tape);
  NoGradGuard no_grad;
  if (use_cache) model.reset_cache();
  const CacheReset<Model> reset_on_exit{model};
  if constexpr (requires { model.reserve_cache(B, context_size); }) {
    // The whole generation's room up front: no step grows the cache.
    if (use_cache) model.reserve_cache(B, std::min(context_size, ids.size(1) + max_new_tokens));
  }
  if (stats != nullptr) *stats = {};
  Ids cond;
  std::vector<int64_t> window;
  window.reserve(static_cast<size_t>(B * context_size));
  Ids next;  // [B, 1]: each step's new ids
  for (int64_t step = 0; step < max_new_tokens; ++step) {
    const auto start = Clock::now();
    tape.reset();
    // idx_cond = idx[:, -context_size:]                                   [B, Tc]
    const int64_t T = static_cast<int64_t>(rows[0].size());
    const int64_t Tc = std::min(T, context_size);
    // With the cache, a step feeds the one new token unless the window is full, when the
    // cache starts again from the cropped context (what the uncached step sees).
    const bool decode = use_cache && step > 0 && model.cache_position() + 1 <= context_size;
    const int64_t fed = decode ? 1 : Tc;
    window.clear();
    for (const auto& row : rows) window.insert(window.end(), row.end() - fed, row.end());
    cond.assign(Shape{B, fed}, window);
    Tensor logits;  // [B, V]: the last position only
    if (use_cache) {
      if (!decode) model.reset_cache();
      logits = select(model.forward(cond, true, true), 1, 0);  // [B, 1, V] -> [B, V]
    } else {
      logits = model(cond);                // [B, Tc, V]
      logits = select(logits, 1, Tc - 1);  // [B, V]
    }
    if (s.top_k) logits = top_k_filter(logits, *s.top_k);  // [B, V]
    if (simple) {
      argmax(softmax(logits, -1), -1, /*keepdim=*/true, next);
    } else if (s.temperature > 0.0) {
      Tensor probs = softmax(logits / s.temperature, -1);  // [B, V]
      multinomial(probs, 1, generator, next);
    } else {
      argmax(logits, -1, /*keepdim=*/true, next);
    }
    bool all_eos = s.eos_id.has_value();
    for (int64_t b = 0; b < B && all_eos; ++b) all_eos = next[b] == *s.eos_id;
    if (!all_eos) {
      for (int64_t b = 0; b < B; ++b) rows[static_cast<size_t>(b)].push_back(next[b]);
      if (on_token) on_token(next);
    }
    if (stats != nullptr) {
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      if (step == 0) {
        stats->prompt_tokens = fed;
        stats->prefill_seconds = seconds;
      } else {
        stats->decode_tokens += all_eos ? 0 : 1;
        stats->decode_seconds += seconds;
      }
    }
    if (all_eos) break;
  }
  std::vector<int64_t> out;
  for (const auto& row : rows) out.insert(out.end(), row.begin(), row.end());
  const int64_t T = static_cast<int64_t>(rows[0].size());
  return Ids(Shape{B, T}, std::move(out));
}

}  // namespace

Ids generate_text_simple(const GPTModel& model, const Ids& ids, int64_t max_new_tokens,
                         int64_t context_size, bool use_cache) {
  const Sampling greedy;
  check_arguments("generate_text_simple", model, ids, max_new_tokens, context_size, greedy);
  return run(model, ids, max_new_tokens, context_size, greedy, /*simple=*/true, default_generator(),
             use_cache, {}, nullptr);
}

Ids generate(const GPTModel& model, const Ids& ids, int64_t max_new_tokens, int64_t context_size,
             double temperature, std::optional<int64_t> top_k, std::optional<int64_t> eos_id,
             Generator& generator, bool use_cache) {
  const Sampling s{temperature, top_k, eos_id};
  check_arguments("generate", model, ids, max_new_tokens, context_size, s);
  return run(model, ids, max_new_tokens, context_size, s, /*simple=*/false, generator, use_cache,
             {}, nullptr);
}

namespace {

template <class Model>
Ids generate_with(const Model& model, const Ids& ids, const GenerateOptions& o) {
  const Sampling s{o.temperature, o.top_k, o.eos_id};
  const int64_t context_size = o.context_size == 0 ? model.config().context_length : o.context_size;
  check_arguments("generate", model, ids, o.max_new_tokens, context_size, s);
  return run(model, ids, o.max_new_tokens, context_size, s, /*simple=*/false,
             o.generator != nullptr ? *o.generator : default_generator(), o.use_cache, o.on_token,
             o.stats);
}

template <class Model>
Ids greedy(const Model& model, const Ids& ids, int64_t max_new_tokens, int64_t context_size,
           bool use_cache) {
  const Sampling s;
  check_arguments("generate_text_simple", model, ids, max_new_tokens, context_size, s);
  return run(model, ids, max_new_tokens, context_size, s, /*simple=*/true, default_generator(),
             use_cache, {}, nullptr);
}

}  // namespace

Ids generate(const GPTModel& model, const Ids& ids, const GenerateOptions& o) {
  return generate_with(model, ids, o);
}

Ids generate(const Qwen3Model& model, const Ids& ids, const GenerateOptions& o) {
  return generate_with(model, ids, o);
}

Ids generate(const Llama3Model& model, const Ids& ids, const GenerateOptions& o) {
  return generate_with(model, ids, o);
}

Ids generate_text_simple(const Qwen3Model& model, const Ids& ids, int64_t max_new_tokens,
                         int64_t context_size, bool use_cache) {
  return greedy(model, ids, max_new_tokens, context_size, use_cache);
}

Ids generate_text_simple(const Llama3Model& model, const Ids& ids, int64_t max_new_tokens,
                         int64_t context_size, bool use_cache) {
  return greedy(model, ids, max_new_tokens, context_size, use_cache);
}

}  // namespace tapegrad::nn
