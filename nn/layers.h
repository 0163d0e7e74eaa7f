// The basic layers as torch.nn builds them: Linear, Embedding, Dropout, and the book's LayerNorm
// and GELU (chapter 4), each an nn::Module (nn/module.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <tapegrad/graph/aligned_buffer.h>
#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/nn/module.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad::nn {

// Throws Error naming `module` unless 0 <= p < 1 (p = 1 would drop everything: torch allows it,
// the dropout op does not, so it is rejected when the module is built, not at its first forward).
void check_dropout_probability(const std::string& module, double p);

// torch.nn.Linear: y = x·Wᵀ + b, weight [out_features, in_features] and an optional bias
// [out_features]. The constructor draws the weight, then the bias, as nn.Linear's
// reset_parameters does (kaiming_uniform_(a=√5) for the weight, U(-1/√in, 1/√in) for the bias:
// both bounds are 1/√in up to torch's rounding), so after the same manual_seed the same layers
// built in the same order hold torch's values bit for bit (nn/init.h has the arithmetic).
//
// Registered as "weight" and "bias". On its own, a Linear named "proj" names its parameters
// "proj.weight" and "proj.bias"; inside a module they take their path ("W_query.weight").
// forward records inside NameScope(name).
class Linear : public UnaryModule {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, DType dtype = DType::Float32,
         std::string name = "Linear", Generator& generator = default_generator());

  // x [.., in_features] -> [.., out_features].
  Tensor forward(const Tensor& x) const override;

  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  bool has_bias() const { return bias.defined(); }

  // Inference only: keeps the weight as bfloat16 (round to nearest even) and frees its float32
  // values (Parameter::release_values: `weight` keeps its name and shape, and any use of its
  // values throws Error naming it). forward then runs the bfloat16 kernels
  // (kernels/gemm/linear_bf16.h: weights widened to float32, x and the sums float32) and throws
  // Error naming the weight when gradients are enabled. Only float32 layers; the bias stays
  // float32. Tapes that hold the weight must be reset first. Irreversible (the float32 values are
  // gone).
  void use_bf16_weight();
  // The same, with the bfloat16 bits written by `fill` (all out_features · in_features of them,
  // row-major) instead of rounded from the float32 values, which need not be held: a loader's
  // way into bfloat16 without the float32 copy (Bf16LoadGuard). Only float32 layers.
  void set_bf16_weight(const std::function<void(uint16_t* bits)>& fill);
  bool has_bf16_weight() const { return bf16_weight_.data() != nullptr; }
  const uint16_t* bf16_weight() const { return static_cast<const uint16_t*>(bf16_weight_.data()); }

  Parameter weight;  // [out_features, in_features]
  Parameter bias;    // [out_features]; undefined when built with bias = false

 protected:
  // A replacing Linear must take the same input: the same in_features and dtype (any
  // out_features: a new head).
  std::string same_class_problem(const Module& replacement) const override;

 private:
  int64_t in_features_ = 0;
  int64_t out_features_ = 0;
  AlignedBuffer bf16_weight_;  // [out_features, in_features] bfloat16 bits after use_bf16_weight
};

// For loaders that fill a model's linear weights as bfloat16 straight from a file: while a guard
// is alive on this thread, an nn::Linear built in float32 draws no weight and keeps no float32
// values for it (released, until set_bf16_weight gives it bfloat16 ones: any other use throws
// Error naming it), and an nn::Embedding draws nothing (zeros until loaded). Its bias, if any,
// is drawn as usual. So a model built under it holds only what its loader will overwrite.
class Bf16LoadGuard {
 public:
  Bf16LoadGuard();
  ~Bf16LoadGuard();
  Bf16LoadGuard(const Bf16LoadGuard&) = delete;
  Bf16LoadGuard& operator=(const Bf16LoadGuard&) = delete;
  static bool active();

 private:
  bool previous_;
};

// Inference with bfloat16 weights: use_bf16_weight() on every nn::Linear of `model` (for a
// GPTModel: the attention's W_query, W_key, W_value and out_proj, the feed-forward layers and
// out_head). Embeddings, norms and biases stay float32: a token reads one row of each embedding
// table, so their bytes per token are few. A LinearWithLoRA's inner Linear is converted too (its
// LoRA matrices stay float32). Throws Error, changing nothing, when a Linear is not float32.
// Tapes that hold the model's weights must be reset first. Returns the layers converted.
int64_t use_bf16_weights(Module& model);

// torch.nn.Embedding's options beyond the sizes.
struct EmbeddingOptions {
  // A row that reads as zeros when built and gets no gradient (torch's padding_idx: a pad token).
  // Negative counts from the end, as torch; it must be in [-num_embeddings, num_embeddings).
  std::optional<int64_t> padding_idx{};
  // Each row a forward looks up whose norm_type-norm exceeds max_norm is scaled in place, under
  // no gradient, to max_norm / (norm + 1e-7) times itself (torch's embedding_renorm_) before the
  // lookup: the weight changes in forward, as torch's.
  std::optional<double> max_norm{};
  double norm_type = 2.0;  // > 0, or infinity (the largest magnitude)
};

// torch.nn.Embedding: weight [num_embeddings, embedding_dim] drawn by normal_(0, 1) (torch's
// reset_parameters; then the padding_idx row zeroed, as torch), looked up by int64 ids.
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, DType dtype = DType::Float32,
            std::string name = "Embedding", Generator& generator = default_generator());
  // Throws Error naming the module for a padding_idx out of range, max_norm <= 0 or NaN, or a
  // norm_type <= 0 or NaN.
  Embedding(int64_t num_embeddings, int64_t embedding_dim, EmbeddingOptions options,
            DType dtype = DType::Float32, std::string name = "Embedding",
            Generator& generator = default_generator());

  // ids of any shape S (values in [0, num_embeddings)) -> S + [embedding_dim].
  Tensor forward(const Ids& ids) const;
  Tensor forward(std::span<const int64_t> ids, const Shape& ids_shape) const;
  Tensor operator()(const Ids& ids) const { return forward(ids); }

  int64_t num_embeddings() const { return weight.shape()[0]; }
  int64_t embedding_dim() const { return weight.shape()[1]; }
  // padding_idx in [0, num_embeddings) (a negative one given is counted from the end).
  std::optional<int64_t> padding_idx() const { return options_.padding_idx; }
  std::optional<double> max_norm() const { return options_.max_norm; }
  double norm_type() const { return options_.norm_type; }

  Parameter weight;  // [num_embeddings, embedding_dim]

 protected:
  // A replacing Embedding must give the same embedding_dim and dtype (any vocabulary).
  std::string same_class_problem(const Module& replacement) const override;

 private:
  // max_norm's in-place renorm of the rows `ids` name (each once), checked against the range
  // first so that no write lands outside the weight.
  void renorm_rows(std::span<const int64_t> ids, const Shape& ids_shape) const;

  EmbeddingOptions options_;
};

// torch.nn.Dropout(p): the dropout op in training mode, the identity in eval mode (nothing drawn
// then, nor when p == 0). p must be in [0, 1). Its op is named after the module ("drop_emb").
class Dropout : public UnaryModule {
 public:
  explicit Dropout(double p, std::string name = "Dropout",
                   Generator& generator = default_generator());
  Tensor forward(const Tensor& x) const override;  // [..] -> [..]
  double p() const { return p_; }

 private:
  double p_;
  Generator* generator_;  // the mask stream (torch's global generator by default)
};

// The book's LayerNorm (§4.2): over the last dim, biased variance, eps 1e-5, then scale * norm +
// shift with scale = ones, shift = zeros [emb_dim] (the layer_norm op).
class LayerNorm : public UnaryModule {
 public:
  explicit LayerNorm(int64_t emb_dim, DType dtype = DType::Float32, std::string name = "LayerNorm");
  Tensor forward(const Tensor& x) const override;  // [.., emb_dim] -> [.., emb_dim]

  double eps = 1e-5;
  Parameter scale;  // [emb_dim]
  Parameter shift;  // [emb_dim]

 protected:
  // A replacing LayerNorm must normalise the same emb_dim in the same dtype.
  std::string same_class_problem(const Module& replacement) const override;
};

// torch.nn.GELU: approximate "none" (exact, torch's default) or "tanh" (the book's GELU, §4.3,
// which the GPT's feed-forward uses). Another value throws Error naming the option. No parameters.
class GELU : public UnaryModule {
 public:
  explicit GELU(std::string approximate = "none", std::string name = "GELU");
  Tensor forward(const Tensor& x) const override { return gelu(x, approximate); }  // [..] -> [..]
  std::string approximate;
};

}  // namespace tapegrad::nn
