// Qwen3 as the book's repository writes it (rasbt/LLMs-from-scratch, pkg/llms_from_scratch/
// qwen3.py): RMSNorm, FeedForward (SwiGLU), GroupedQueryAttention, TransformerBlock, Qwen3Model.
//
// Built in the book's order from one generator, so after manual_seed(123) a Qwen3Model holds the
// weights the book's Qwen3Model holds after torch.manual_seed(123) (with the config's dtype
// float32), and named_parameters() gives its keys: "tok_emb.weight",
// "trf_blocks.0.att.W_query.weight", "trf_blocks.0.att.q_norm.scale", "trf_blocks.0.ff.fc1.weight",
// "trf_blocks.0.norm1.scale", "final_norm.scale", "out_head.weight". As in the book's class,
// out_head is its own weight (the book's loader ties it to tok_emb when it loads Qwen's files).
//
// Dimension names: B batch, T tokens (≤ context_length), C = emb_dim, H = n_heads, G =
// n_kv_groups, D = head_dim, F = hidden_dim, V = vocab_size.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include <tapegrad/graph/ids.h>
#include <tapegrad/nn/gqa_cache.h>
#include <tapegrad/nn/layers.h>
#include <tapegrad/nn/module.h>

namespace tapegrad::nn {

// Rows [first, first + T) of RoPE's tables (the book's self.cos[:T], self.sin[:T]; with a KV
// cache, cos[ptr:ptr + T]) as [T, D] tensors of dtype on the current tape (Qwen3Model and
// Llama3Model). Float32 rows are copied into the tape's arena (no heap allocation).
std::pair<Tensor, Tensor> rope_rows(const RopeTables& rope, int64_t T, DType dtype,
                                    int64_t first = 0);

// The book's cfg dict (its "dtype" is the constructors' dtype argument: float32 or float64 here).
struct Qwen3Config {
  int64_t vocab_size = 151936;     // V
  int64_t context_length = 40960;  // the longest T (the rope tables' rows)
  int64_t emb_dim = 1024;          // C
  int64_t n_heads = 16;            // H
  int64_t n_layers = 28;           // TransformerBlocks
  int64_t hidden_dim = 3072;       // F, the feed-forward's inner size
  int64_t head_dim = 128;          // D; 0 for the book's None (C / H)
  bool qk_norm = true;             // RMSNorm on each query and key head
  int64_t n_kv_groups = 8;         // G, must divide H
  double rope_base = 1000000.0;    // RoPE's theta

  int64_t resolved_head_dim() const { return head_dim != 0 ? head_dim : emb_dim / n_heads; }
};

// The book's QWEN_CONFIG_06_B (Qwen3 0.6B).
inline constexpr Qwen3Config QWEN_CONFIG_06_B{151936, 40960, 1024, 16, 28,
                                              3072,   128,   true, 8,  1000000.0};
// The book's QWEN3_CONFIG_1_7B, _4B, _8B, _14B and _32B (the dense models).
inline constexpr Qwen3Config QWEN3_CONFIG_1_7B{151936, 40960, 2048, 16, 28,
                                               6144,   128,   true, 8,  1000000.0};
inline constexpr Qwen3Config QWEN3_CONFIG_4B{151936, 40960, 2560, 32, 36,
                                             9728,   128,   true, 8,  1000000.0};
inline constexpr Qwen3Config QWEN3_CONFIG_8B{151936, 40960, 4096, 32, 36,
                                             12288,  128,   true, 8,  1000000.0};
inline constexpr Qwen3Config QWEN3_CONFIG_14B{151936, 40960, 5120, 40, 40,
                                              17408,  128,   true, 8,  1000000.0};
inline constexpr Qwen3Config QWEN3_CONFIG_32B{151936, 40960, 5120, 64, 64,
                                              25600,  128,   true, 8,  1000000.0};

// Throws Error naming the bad field unless every size is positive, n_heads % n_kv_groups == 0,
// C % H == 0 when head_dim is 0, D is even and rope_base > 0.
void check_config(const Qwen3Config& cfg);

// The book's RMSNorm(emb_dim, eps, bias): the rms_norm op with scale = ones [C] and, with bias,
// shift = zeros [C]. (The book's qwen3_compatible cast to float32 changes nothing here: float32
// models compute in float32, float64 ones in float64.)
class RMSNorm : public UnaryModule {
 public:
  explicit RMSNorm(int64_t emb_dim, double eps = 1e-6, bool bias = false,
                   DType dtype = DType::Float32, std::string name = "RMSNorm");
  Tensor forward(const Tensor& x) const override;  // [.., C] -> [.., C]

  double eps;
  Parameter scale;  // [C]
  Parameter shift;  // [C]; undefined without bias
};

namespace qwen3 {

// fc3(silu(fc1(x)) * fc2(x)), no biases.
class FeedForward : public UnaryModule {
 public:
  FeedForward(const Qwen3Config& cfg, DType dtype, Generator& generator,
              std::string name = "FeedForward");
  // The same layers for C = emb_dim, F = hidden_dim (Llama 3's FeedForward is this one).
  FeedForward(int64_t emb_dim, int64_t hidden_dim, DType dtype, Generator& generator,
              std::string name = "FeedForward");
  Tensor forward(const Tensor& x) const override;  // [B, T, C] -> [B, T, C]

  Linear fc1;  // [F, C]
  Linear fc2;  // [F, C]
  Linear fc3;  // [C, F]
};

// Projections to H query heads and G key/value heads of D, q_norm/k_norm per head (qk_norm),
// RoPE, grouped-query causal attention, out_proj. No biases, no dropout.
class GroupedQueryAttention : public Module {
 public:
  GroupedQueryAttention(const Qwen3Config& cfg, DType dtype, Generator& generator,
                        std::string name = "GroupedQueryAttention");
  // x [B, T, C], the rope tables' first T rows cos, sin [T, D] -> [B, T, C].
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin) const;
  // The same with the KV cache (the book's kv_cache/qwen3.py, use_cache=True): x holds only the
  // new tokens, cos and sin their rows (positions continue from the cached tokens); their keys
  // and values are appended to the cache and the queries attend to everything cached.
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin, bool use_cache) const;
  void reset_cache() const { cache_.reset(); }
  GQAKVCache& cache() const { return cache_; }

  int64_t num_heads, num_kv_groups, head_dim;
  bool qk_norm;
  Linear W_query;   // [H·D, C]
  Linear W_key;     // [G·D, C]
  Linear W_value;   // [G·D, C]
  Linear out_proj;  // [C, H·D]
  RMSNorm q_norm;   // [D]; registered only with qk_norm
  RMSNorm k_norm;   // [D]; registered only with qk_norm

 private:
  mutable GQAKVCache cache_;  // scratch for generation, not the model's state (hence mutable)
};

// Pre-norm block: x + att(norm1(x)), then x + ff(norm2(x)).
class TransformerBlock : public Module {
 public:
  TransformerBlock(const Qwen3Config& cfg, DType dtype, Generator& generator,
                   std::string name = "TransformerBlock");
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin,
                 bool use_cache = false) const;  // [B, T, C]

  GroupedQueryAttention att;
  FeedForward ff;
  RMSNorm norm1;
  RMSNorm norm2;
};

}  // namespace qwen3

class Qwen3Model : public Module {
 public:
  explicit Qwen3Model(const Qwen3Config& cfg, DType dtype = DType::Float32,
                      Generator& generator = default_generator(), std::string name = "Qwen3Model");

  // in_idx [B, T] int64 ids in [0, V), T ≤ context_length -> logits [B, T, V]. Throws Error
  // (before recording anything) on another rank, a longer T, or an id outside the vocabulary.
  Tensor forward(const Ids& in_idx) const;
  Tensor operator()(const Ids& in_idx) const { return forward(in_idx); }

  // The book's forward(in_idx, use_cache) of kv_cache/qwen3.py: with use_cache, in_idx holds only
  // the new tokens, their positions continue from the tokens already cached (the rope rows from
  // there on), and every block's attention keeps its keys and values (GQAKVCache). With
  // last_position_only, the final norm and the output head run for the last position alone:
  // logits [B, 1, V], all generation needs. Throws Error (before recording anything) on what
  // forward(in_idx) rejects, on positions past context_length (reset_cache() and prefill the
  // last tokens again), with gradients enabled (the cache is for inference: NoGradGuard), and on
  // another batch than the cached tokens'.
  Tensor forward(const Ids& in_idx, bool use_cache, bool last_position_only = false) const;
  // The book's reset_kv_cache(): empties every block's cache (keeping its memory), position 0.
  void reset_cache() const;
  // Room in every block's cache for `tokens` positions of `batch` rows, so a generation of that
  // length allocates nothing per step (the buffers otherwise grow by doubling as needed).
  void reserve_cache(int64_t batch, int64_t tokens) const;
  int64_t cache_position() const { return ptr_current_pos_; }  // tokens fed since the reset
  bool training_with_dropout() const { return false; }         // no dropout in the book's model
  // The tape nn::generate records on, kept with the model so a generation reuses the memory the
  // last one faulted in (GenerationTapeSlot); nullptr while another generation holds it.
  Tape* acquire_generation_tape() const { return generation_tape_.acquire(); }
  void release_generation_tape() const { generation_tape_.release(); }

  const Qwen3Config& config() const { return cfg_; }
  // The parameter count of a Qwen3Model of `cfg`, from the shapes alone (without building one:
  // the 0.6B config's 751,632,384 weights would take 3 GB in float32).
  static int64_t count_parameters(const Qwen3Config& cfg);

 private:
  Qwen3Config cfg_;  // first: checked before any member draws a weight
  DType dtype_;
  RopeTables rope_;                      // the book's cos and sin buffers [context_length, D]
  mutable int64_t ptr_current_pos_ = 0;  // the cache's next position (scratch, like the cache)
  GenerationTapeSlot generation_tape_;

 public:
  Embedding tok_emb;                               // [V, C]
  ModuleList<qwen3::TransformerBlock> trf_blocks;  // n_layers blocks
  RMSNorm final_norm;                              // [C]
  Linear out_head;                                 // [V, C], no bias
};

}  // namespace tapegrad::nn
