// The attention layers of chapter 3 of *Build a Large Language Model (From Scratch)*, as modules.
//
// Each class is the book's PyTorch class of the same name: its parameters are created in the
// same order from the same generator, so after manual_seed(s) it holds the values torch's class
// holds after torch.manual_seed(s), and its forward computes what the book's forward computes
// (from tapegrad ops, so backward trains it).
//
// Dimension names: B batch, T tokens (≤ context_length), C_in = d_in, D = d_out, H heads,
// D_h = D / H the head size.
//
// Every module is an nn::Module (nn/module.h): parameters() and named_parameters() in torch's
// order and with torch's names (e.g. "W_query.weight", "heads.1.W_key.weight", "out_proj.bias"),
// state_dict() with the causal "mask" buffer where the book registers one, train()/eval() for
// dropout (modules start in training mode, as torch's do), and records its forward inside
// NameScope(name) so that the DOT drawing of the tape gets one box per module (and per head
// where the heads are separate modules). Dropout p must be in [0, 1).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/nn/layers.h>
#include <tapegrad/nn/module.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad::nn {

// §3.4.2: raw weight matrices W [d_in, d_out] drawn by torch.rand (query, key, value), used as
// x·W. Input [T, d_in] (one sequence, no batch: the book's forward uses keys.T).
class SelfAttentionV1 : public UnaryModule {
 public:
  SelfAttentionV1(int64_t d_in, int64_t d_out, DType dtype = DType::Float32,
                  Generator& generator = default_generator(),
                  std::string name = "SelfAttention_v1");

  Tensor forward(const Tensor& x) const override;  // [T, d_in] -> [T, d_out]

  Parameter W_query;  // [d_in, d_out]
  Parameter W_key;    // [d_in, d_out]
  Parameter W_value;  // [d_in, d_out]
};

// §3.4.2: the same with nn.Linear projections (torch's init, W stored [d_out, d_in]).
class SelfAttentionV2 : public UnaryModule {
 public:
  SelfAttentionV2(int64_t d_in, int64_t d_out, bool qkv_bias = false, DType dtype = DType::Float32,
                  Generator& generator = default_generator(),
                  std::string name = "SelfAttention_v2");

  Tensor forward(const Tensor& x) const override;  // [T, d_in] -> [T, d_out]

  Linear W_query;
  Linear W_key;
  Linear W_value;
};

// §3.5.3: single-head causal attention over a batch, with dropout on the attention weights.
class CausalAttention : public UnaryModule {
 public:
  CausalAttention(int64_t d_in, int64_t d_out, int64_t context_length, double dropout,
                  bool qkv_bias = false, DType dtype = DType::Float32,
                  Generator& generator = default_generator(), std::string name = "CausalAttention");

  Tensor forward(const Tensor& x) const override;  // [B, T, d_in] -> [B, T, d_out]

  Linear W_query;
  Linear W_key;
  Linear W_value;

 private:
  int64_t context_length_;
  double dropout_;
  Generator* generator_;  // dropout's mask stream (torch's global generator by default)
};

// §3.6.1: num_heads independent CausalAttention heads, outputs concatenated along the last dim.
// Head i's parameters are named "heads.i.W_query.weight", ...; it records inside "head i".
class MultiHeadAttentionWrapper : public UnaryModule {
 public:
  MultiHeadAttentionWrapper(int64_t d_in, int64_t d_out, int64_t context_length, double dropout,
                            int64_t num_heads, bool qkv_bias = false, DType dtype = DType::Float32,
                            Generator& generator = default_generator(),
                            std::string name = "MultiHeadAttentionWrapper");

  Tensor forward(const Tensor& x) const override;  // [B, T, d_in] -> [B, T, num_heads * d_out]

  ModuleList<CausalAttention> heads;
};

// The attention weights a MultiHeadAttention kept from its last forward (keep_attention(true)).
struct AttentionWeights {
  Shape shape;                 // [B, H, T, T]: row i of head h is query i's weights over keys
  std::vector<double> values;  // row-major, shape.numel() values
  // Batch row b's weights, [H, T, T]. Throws Error unless 0 <= b < B.
  std::span<const double> sequence(int64_t b) const;
};

// §3.6.2: multi-head attention with weight splits: one projection for all heads, split into
// H heads of D_h = d_out / H, causal mask, softmax(QKᵀ/√D_h), dropout, heads merged back, and an
// output projection (with bias). Parameters: W_query, W_key, W_value ([d_out, d_in], biases when
// qkv_bias), then out_proj ([d_out, d_out] and its bias), as the book creates them. Everything
// between the projections and out_proj runs as one op, causal_dot_product_attention (the same
// numbers and dropout draws as the book's ops one by one, less memory, no head copies); the DOT
// drawing still shows those ops, inside a cluster named after the op (OpDef::decomposition).
class MultiHeadAttention : public UnaryModule {
 public:
  MultiHeadAttention(int64_t d_in, int64_t d_out, int64_t context_length, double dropout,
                     int64_t num_heads, bool qkv_bias = false, DType dtype = DType::Float32,
                     Generator& generator = default_generator(),
                     std::string name = "MultiHeadAttention");

  // Without the cache: the book's chapter-3 forward. Throws Error when the KV cache holds tokens
  // (cached and uncached calls mixed without reset_cache()).
  Tensor forward(const Tensor& x) const override;  // [B, T, d_in] -> [B, T, d_out]

  // The KV cache of the book's ch04/03_kv-cache (gpt_with_kv_cache_optimized.py), for
  // inference. forward(x, true) takes only the new tokens [B, T_new, d_in]: their keys and
  // values go into per-layer buffers [B, H, window, D_h] (allocated at the first cached call
  // for that batch and window, and kept by reset_cache for the next generation), and their queries
  // attend to everything cached so far (the causal mask offset by the tokens already there). When
  // the new tokens would overflow the window, the oldest are dropped (the book's sliding window).
  // forward(x, false) is forward(x). Throws Error, before changing the cache: with gradients
  // enabled (run under NoGradGuard); in training mode with dropout > 0; with a batch other than the
  // cache's; with more new tokens than the window; after an uncached forward since the last
  // reset_cache(). The cache is scratch for generation, not part of the model's state (hence
  // const).
  Tensor forward(const Tensor& x, bool use_cache) const;  // [B, T_new, d_in] -> [B, T_new, d_out]
  // Empties the cache (its buffers are kept, so the next generation of the same batch touches
  // no new memory); the next call may be cached or not.
  void reset_cache() const;
  // The window the cache keeps (the book's kv_window_size; context_length unless set). Throws
  // Error unless window >= 1 and the cache is empty.
  void set_cache_window(int64_t window);
  int64_t cache_window() const { return window_; }
  int64_t cache_length() const { return cache_.length; }  // tokens held now (the book's ptr_cur)

  int64_t num_heads() const { return num_heads_; }
  int64_t head_dim() const { return head_dim_; }

  // Opt-in: while on, each forward copies its attention weights softmax(QKᵀ/√D_h) (causal, taken
  // before dropout, so in eval mode exactly what multiplies the values) into last_attention().
  // Off by default, and then forward neither copies nor allocates anything for it. Turning it
  // off drops what was kept. The copy only reads values: the numbers and the tape are unchanged.
  void keep_attention(bool keep);
  bool keeps_attention() const { return keep_attention_; }
  // The weights of the last forward since keep_attention(true), [B, H, T, T]. Throws Error
  // naming the module when keep_attention is off or no forward has run since it was turned on.
  const AttentionWeights& last_attention() const;

  Linear W_query;
  Linear W_key;
  Linear W_value;
  Linear out_proj;

 private:
  int64_t d_out_;
  int64_t num_heads_;
  int64_t head_dim_;
  int64_t context_length_;
  double dropout_;
  Generator* generator_;
  bool keep_attention_ = false;
  // Written by the const forward when keep_attention_ is on: a record of the last call, not
  // state the module computes with (hence mutable).
  mutable AttentionWeights kept_attention_;

  // What has used the module since the last reset_cache(): mixing is an error.
  enum class CacheMode { kFresh, kCached, kUncached };
  struct KVCache {
    std::vector<float> k32, v32;   // [B, H, window, D_h] for float32 modules
    std::vector<double> k64, v64;  // the same for float64 ones
    int64_t batch = 0;
    int64_t length = 0;
    CacheMode mode = CacheMode::kFresh;
  };
  int64_t window_;
  mutable KVCache cache_;
};

}  // namespace tapegrad::nn
