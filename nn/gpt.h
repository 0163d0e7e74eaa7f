// The GPT of chapter 4 of *Build a Large Language Model (From Scratch)*: FeedForward,
// TransformerBlock and GPTModel, each the book's class (ch04/01_main-chapter-code/gpt.py).
//
// Built in the book's order from one generator, so after manual_seed(123) a GPTModel holds the
// weights torch's GPTModel holds after torch.manual_seed(123), and named_parameters() /
// state_dict() give torch's keys ("tok_emb.weight", "trf_blocks.0.att.W_query.weight",
// "trf_blocks.0.ff.layers.0.weight", "final_norm.scale", "out_head.weight"; state_dict() adds
// each attention's "mask" buffer). save()/load() exchange safetensors files with PyTorch.
//
// Dimension names: B batch, T tokens (≤ context_length), C = emb_dim, H = n_heads,
// V = vocab_size.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include <tapegrad/graph/ids.h>
#include <tapegrad/nn/attention.h>
#include <tapegrad/nn/layers.h>
#include <tapegrad/nn/module.h>

namespace tapegrad::nn {

// The book's cfg dict.
struct GPTConfig {
  int64_t vocab_size = 50257;     // V
  int64_t context_length = 1024;  // the longest T
  int64_t emb_dim = 768;          // C
  int64_t n_heads = 12;           // H, must divide C
  int64_t n_layers = 12;          // TransformerBlocks
  double drop_rate = 0.1;         // embeddings, attention weights and shortcuts; in [0, 1)
  bool qkv_bias = false;          // biases on W_query, W_key, W_value
};

// GPT-2 small, the book's GPT_CONFIG_124M.
inline constexpr GPTConfig GPT_CONFIG_124M{50257, 1024, 768, 12, 12, 0.1, false};

// Throws Error naming the bad field unless every size is positive, emb_dim % n_heads == 0 and
// 0 <= drop_rate < 1.
void check_config(const GPTConfig& cfg);

// §4.3: layers = Sequential(Linear(C, 4C), GELU(), Linear(4C, C)).
class FeedForward : public UnaryModule {
 public:
  explicit FeedForward(const GPTConfig& cfg, DType dtype = DType::Float32,
                       Generator& generator = default_generator(),
                       std::string name = "FeedForward");
  Tensor forward(const Tensor& x) const override;  // [B, T, C] -> [B, T, C]

  Sequential layers;
};

// §4.5: pre-norm block: x + drop(att(norm1(x))), then x + drop(ff(norm2(x))).
class TransformerBlock : public UnaryModule {
 public:
  explicit TransformerBlock(const GPTConfig& cfg, DType dtype = DType::Float32,
                            Generator& generator = default_generator(),
                            std::string name = "TransformerBlock");
  Tensor forward(const Tensor& x) const override;  // [B, T, C] -> [B, T, C]
  // The same with the attention's KV cache (MultiHeadAttention::forward(x, use_cache)).
  Tensor forward(const Tensor& x, bool use_cache) const;  // [B, T_new, C] -> [B, T_new, C]

  MultiHeadAttention att;
  FeedForward ff;
  LayerNorm norm1;
  LayerNorm norm2;
  Dropout drop_shortcut;
};

// §4.6: token + position embeddings, dropout, n_layers blocks, final LayerNorm, output head
// (no bias) giving logits over the vocabulary.
class GPTModel : public Module {
 public:
  explicit GPTModel(const GPTConfig& cfg, DType dtype = DType::Float32,
                    Generator& generator = default_generator(), std::string name = "GPTModel");

  // in_idx [B, T] int64 ids in [0, V), T ≤ context_length -> logits [B, T, V]. Throws Error
  // (before recording anything) on another rank, a longer T, or an id outside the vocabulary.
  Tensor forward(const Ids& in_idx) const;
  Tensor operator()(const Ids& in_idx) const { return forward(in_idx); }

  // The book's forward(in_idx, use_cache) of ch04/03_kv-cache (the optimized variant): with
  // use_cache, in_idx holds only the new tokens, their positions continue from the tokens
  // already cached (the book's ptr_current_pos), and every block's attention keeps its keys and
  // values (MultiHeadAttention::forward(x, true)). last_position_only computes the final norm
  // and the output head for the last position alone: logits [B, 1, V], all generation needs.
  // Throws Error (before recording anything) on what forward(in_idx) rejects, on positions past
  // context_length (ptr_current_pos + T > context_length: reset_cache() and prefill the last
  // tokens again), and on what the cached attention rejects (gradients enabled, training mode
  // with dropout, another batch, mixing with uncached calls without a reset).
  Tensor forward(const Ids& in_idx, bool use_cache, bool last_position_only = false) const;
  // The book's reset_kv_cache(): empties every block's cache and sets the position back to 0.
  void reset_cache() const;
  // Every block's cache window (the book's kv_window_size; context_length unless set): past it
  // the oldest keys and values are dropped while positions continue. Throws Error unless
  // window >= 1 and the cache is empty.
  void set_cache_window(int64_t window);
  int64_t cache_position() const { return ptr_current_pos_; }  // tokens fed since the reset

  // The tape nn::generate records on, kept with the model like the KV cache: a new tape draws
  // fresh blocks from the heap, and blocks too large for malloc to keep come from the kernel
  // as new pages each time, every one of them faulted in and zeroed on first touch, so a
  // generation on a tape of its own pays that again. nullptr while another generation holds it
  // (that caller then takes a tape of its own); hand it back, reset, with
  // release_generation_tape(). Its memory (one block, at least as large as the largest step so
  // far: memory a generation touches anyway) stays until the model is destroyed.
  Tape* acquire_generation_tape() const;
  void release_generation_tape() const;

  const GPTConfig& config() const { return cfg_; }

  // Activation checkpointing (graph/checkpoint.h): with n > 0, forward(in_idx) runs the blocks in
  // segments of n, each one checkpoint node, when gradients are on: the tape keeps only the
  // segments' inputs and outputs, and backward recomputes each segment (the same dropout masks,
  // from the model's generator), so gradients are bit-identical and memory holds one segment's
  // activations instead of every block's. 0 (the default) records every block as it is.
  // Throws Error for n < 0.
  void set_checkpoint_every(int64_t n);
  int64_t checkpoint_every() const { return checkpoint_every_; }

 private:
  struct GenerationTape {
    Tape tape;
    std::atomic<bool> busy{false};
  };
  GPTConfig cfg_;                        // first: checked before any member draws a weight
  mutable int64_t ptr_current_pos_ = 0;  // the cache's next position (scratch, like the cache)
  std::unique_ptr<GenerationTape> generation_tape_ = std::make_unique<GenerationTape>();
  Generator* generator_;  // the dropout modules' (the one the constructor was given)
  int64_t checkpoint_every_ = 0;
  Tensor embed(const Ids& in_idx, int64_t first_position) const;  // checks, then [B, T, C]
  Tensor blocks(const Tensor& x) const;  // trf_blocks(x), in checkpointed segments if asked

 public:
  Embedding tok_emb;  // [V, C]
  Embedding pos_emb;  // [context_length, C]
  Dropout drop_emb;
  Sequential trf_blocks;  // n_layers x TransformerBlock
  LayerNorm final_norm;
  Linear out_head;  // [V, C], no bias
};

// use_bf16_weights(model) for generation, and what it changes: the last position's logits for
// `prompt` [1, T], computed without the cache and without gradients before and after the
// conversion (the cache is reset after).
struct Bf16Conversion {
  int64_t layers = 0;           // the Linear layers converted
  double max_abs_error = 0.0;   // max |bf16 - float32| over the logits (NaN if either has one)
  double relative_error = 0.0;  // ‖bf16 - float32‖₂ / ‖float32‖₂
  bool same_argmax = true;      // the greedy token is the same
};
Bf16Conversion convert_to_bf16_weights(GPTModel& model, const Ids& prompt);

}  // namespace tapegrad::nn
