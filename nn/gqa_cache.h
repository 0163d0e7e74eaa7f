// The KV cache of one grouped-query attention (Qwen3's and Llama 3's), as the book's
// kv_cache/qwen3.py and kv_cache/llama3.py keep it: each call's keys and values appended after
// the tokens already cached, the new queries attending to all of them (the causal mask offset by
// the cached tokens). Unlike the book's, the cache holds the G key/value heads, not their repeats
// to H: query head h reads kv head h / (H / G) (cached_attention's kv_heads).
//
// Dimension names: B batch, T new tokens, H query heads, G kv heads, D head dim.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/graph/tensor.h>

namespace tapegrad::nn {

class GQAKVCache {
 public:
  // Room for `tokens` positions of batch `batch` (float32 or float64), so the appends up to that
  // many allocate nothing. Throws Error while the cache holds tokens of another batch.
  void reserve(int64_t batch, int64_t kv_heads, int64_t head_dim, int64_t tokens, DType dtype);
  // Empties the cache; its buffers are kept for the next generation.
  void reset() { length_ = 0; }
  int64_t length() const { return length_; }
  int64_t batch() const { return batch_; }

  // queries [B, H, T, D], keys and values [B, G, T, D] (after the norms and RoPE) -> the context
  // [B, T, H·D] (heads merged, before out_proj). The keys and values are appended first. With
  // nothing cached before, it is the uncached grouped_query_attention (the same op and numbers);
  // after, cached_attention over everything held. Grows the buffers (by doubling) when they are
  // full. Throws Error naming `who` on another batch than the cached tokens'.
  Tensor attend(const Tensor& queries, const Tensor& keys, const Tensor& values,
                const std::string& who);

 private:
  template <class T>
  std::vector<T>& keys_of();
  template <class T>
  std::vector<T>& values_of();
  template <class T>
  void grow(int64_t capacity);

  std::vector<float> k32_, v32_;   // [B, G, capacity, D]
  std::vector<double> k64_, v64_;  // the same for float64 models
  DType dtype_ = DType::Float32;
  int64_t batch_ = 0, kv_heads_ = 0, head_dim_ = 0, capacity_ = 0, length_ = 0;
};

// The tape nn::generate records on, kept with a Qwen3Model or Llama3Model like its KV caches (as
// GPTModel keeps one): a new tape draws fresh blocks from the heap, and blocks too large for
// malloc to keep come from the kernel as new pages each time, every one faulted in and zeroed on
// first touch, which took most of a Qwen3 0.6B prefill's time. acquire() gives nullptr while
// another generation holds it (that caller takes a tape of its own); release() hands it back
// reset, keeping its arena's block (at least the largest step's: memory a generation touches
// anyway) until the model is destroyed.
class GenerationTapeSlot {
 public:
  Tape* acquire() const {
    return state_->busy.exchange(true, std::memory_order_acquire) ? nullptr : &state_->tape;
  }
  void release() const {
    state_->tape.reset();
    state_->busy.store(false, std::memory_order_release);
  }

 private:
  struct State {
    Tape tape;
    std::atomic<bool> busy{false};
  };
  std::unique_ptr<State> state_ = std::make_unique<State>();
};

// What a model's cached forward checks before recording anything: gradients off (the cache is
// for inference) and, while the cache holds tokens, the same batch. Errors name `model`.
void check_cached_call(const std::string& model, const Ids& in_idx, const GQAKVCache& cache);

}  // namespace tapegrad::nn
