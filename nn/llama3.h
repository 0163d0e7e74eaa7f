// Llama 3.2 as the book's repository writes it (rasbt/LLMs-from-scratch, pkg/llms_from_scratch/
// llama3.py): GroupedQueryAttention, TransformerBlock and Llama3Model, with torch.nn.RMSNorm and
// the SwiGLU FeedForward (nn::qwen3::FeedForward: the same layers).
//
// Built in the book's order from one generator (its attention draws W_key and W_value before
// W_query), so after manual_seed(123) a Llama3Model holds the weights the book's Llama3Model holds
// after torch.manual_seed(123) (the config's dtype float32), under its names: "tok_emb.weight",
// "trf_blocks.0.att.W_key.weight", "trf_blocks.0.ff.fc1.weight", "trf_blocks.0.norm1.weight"
// (torch.nn.RMSNorm's), "final_norm.weight", "out_head.weight".
//
// Dimension names: B batch, T tokens (≤ context_length), C = emb_dim, H = n_heads, G =
// n_kv_groups, D = C / H, F = hidden_dim, V = vocab_size.
#pragma once

#include <cstdint>
#include <string>

#include <tapegrad/graph/ids.h>
#include <tapegrad/nn/layers.h>
#include <tapegrad/nn/module.h>
#include <tapegrad/nn/qwen3.h>

namespace tapegrad::nn {

// The book's cfg dict (its "dtype" is the constructors' dtype argument).
struct Llama3Config {
  int64_t vocab_size = 128256;           // V
  int64_t context_length = 8192;         // the longest T (the rope tables' rows)
  int64_t orig_context_length = 131072;  // the trained context: rope_base is rescaled to ours
  int64_t emb_dim = 2048;                // C
  int64_t n_heads = 32;                  // H, must divide C
  int64_t n_layers = 16;                 // TransformerBlocks
  int64_t hidden_dim = 8192;             // F
  int64_t n_kv_groups = 8;               // G, must divide H
  double rope_base = 500000.0;           // RoPE's theta before the rescaling
  RopeFreqConfig rope_freq{};            // Llama 3's frequency smoothing
};

// The book's LLAMA32_CONFIG_1B and LLAMA32_CONFIG_3B.
inline constexpr Llama3Config LLAMA32_CONFIG_1B{
    128256, 8192, 131072, 2048, 32, 16, 8192, 8, 500000.0, {32.0, 1.0, 4.0, 8192}};
inline constexpr Llama3Config LLAMA32_CONFIG_3B{
    128256, 8192, 131072, 3072, 24, 28, 8192, 8, 500000.0, {32.0, 1.0, 4.0, 8192}};

// Throws Error naming the bad field unless every size is positive, C % H == 0, H % G == 0, the
// head dim C / H is even and rope_base > 0.
void check_config(const Llama3Config& cfg);

namespace llama3 {

// torch.nn.RMSNorm(emb_dim, eps): the rms_norm op with weight = ones [C].
class RMSNorm : public UnaryModule {
 public:
  RMSNorm(int64_t emb_dim, double eps, DType dtype, std::string name = "RMSNorm");
  Tensor forward(const Tensor& x) const override;  // [.., C] -> [.., C]

  double eps;
  Parameter weight;  // [C]
};

class GroupedQueryAttention : public Module {
 public:
  GroupedQueryAttention(const Llama3Config& cfg, DType dtype, Generator& generator,
                        std::string name = "GroupedQueryAttention");
  // x [B, T, C], the rope tables' first T rows cos, sin [T, D] -> [B, T, C].
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin) const;
  // With the KV cache (kv_cache/llama3.py): as qwen3::GroupedQueryAttention's.
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin, bool use_cache) const;
  void reset_cache() const { cache_.reset(); }
  GQAKVCache& cache() const { return cache_; }

  int64_t num_heads, num_kv_groups, head_dim;
  Linear W_key;     // [G·D, C]
  Linear W_value;   // [G·D, C]
  Linear W_query;   // [C, C]
  Linear out_proj;  // [C, C]

 private:
  mutable GQAKVCache cache_;  // scratch for generation, not the model's state (hence mutable)
};

// Pre-norm block: x + att(norm1(x)), then x + ff(norm2(x)); norms with eps 1e-5.
class TransformerBlock : public Module {
 public:
  TransformerBlock(const Llama3Config& cfg, DType dtype, Generator& generator,
                   std::string name = "TransformerBlock");
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin,
                 bool use_cache = false) const;  // [B, T, C]

  GroupedQueryAttention att;
  qwen3::FeedForward ff;
  RMSNorm norm1;
  RMSNorm norm2;
};

}  // namespace llama3

class Llama3Model : public Module {
 public:
  explicit Llama3Model(const Llama3Config& cfg, DType dtype = DType::Float32,
                       Generator& generator = default_generator(),
                       std::string name = "Llama3Model");

  // in_idx [B, T] int64 ids in [0, V), T ≤ context_length -> logits [B, T, V]. Throws Error
  // (before recording anything) on another rank, a longer T, or an id outside the vocabulary.
  Tensor forward(const Ids& in_idx) const;
  Tensor operator()(const Ids& in_idx) const { return forward(in_idx); }

  // The KV cache of the book's kv_cache/llama3.py: as Qwen3Model's.
  Tensor forward(const Ids& in_idx, bool use_cache, bool last_position_only = false) const;
  void reset_cache() const;
  void reserve_cache(int64_t batch, int64_t tokens) const;
  int64_t cache_position() const { return ptr_current_pos_; }
  bool training_with_dropout() const { return false; }
  // As Qwen3Model's: the tape nn::generate records on, kept with the model.
  Tape* acquire_generation_tape() const { return generation_tape_.acquire(); }
  void release_generation_tape() const { generation_tape_.release(); }

  const Llama3Config& config() const { return cfg_; }
  // The book's rescale_theta: rope_base · context_length / orig_context_length.
  double rope_theta() const;
  // The parameter count of a Llama3Model of `cfg`, from the shapes alone.
  static int64_t count_parameters(const Llama3Config& cfg);

 private:
  Llama3Config cfg_;  // first: checked before any member draws a weight
  DType dtype_;
  RopeTables rope_;                      // the book's cos and sin buffers [context_length, D]
  mutable int64_t ptr_current_pos_ = 0;  // the cache's next position
  GenerationTapeSlot generation_tape_;

 public:
  Embedding tok_emb;                                // [V, C]
  ModuleList<llama3::TransformerBlock> trf_blocks;  // n_layers blocks
  llama3::RMSNorm final_norm;                       // [C]
  Linear out_head;                                  // [V, C], no bias
};

}  // namespace tapegrad::nn
