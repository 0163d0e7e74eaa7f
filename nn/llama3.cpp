// Llama 3.2 (the book's llama3.py): RMSNorm, GroupedQueryAttention, TransformerBlock,
// Llama3Model, built in the book's order.
#include <tapegrad/nn/llama3.h>

#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/scope.h>
#include <tapegrad/nn/model_checks.h>

namespace tapegrad::nn {

void check_config(const Llama3Config& cfg) {
  check_positive("Llama3Config", "vocab_size", cfg.vocab_size);
  check_positive("Llama3Config", "context_length", cfg.context_length);
  check_positive("Llama3Config", "orig_context_length", cfg.orig_context_length);
  check_positive("Llama3Config", "emb_dim", cfg.emb_dim);
  check_positive("Llama3Config", "n_heads", cfg.n_heads);
  check_positive("Llama3Config", "n_layers", cfg.n_layers);
  check_positive("Llama3Config", "hidden_dim", cfg.hidden_dim);
  check_positive("Llama3Config", "n_kv_groups", cfg.n_kv_groups);
  if (cfg.emb_dim % cfg.n_heads != 0) {
    throw Error("Llama3Config: emb_dim " + std::to_string(cfg.emb_dim) +
                " must be divisible by n_heads " + std::to_string(cfg.n_heads));
  }
  if (cfg.n_heads % cfg.n_kv_groups != 0) {
    throw Error("Llama3Config: n_heads " + std::to_string(cfg.n_heads) +
                " must be divisible by n_kv_groups " + std::to_string(cfg.n_kv_groups));
  }
  if ((cfg.emb_dim / cfg.n_heads) % 2 != 0) {
    throw Error("Llama3Config: the head dim " + std::to_string(cfg.emb_dim / cfg.n_heads) +
                " must be even (RoPE rotates halves)");
  }
  if (!(cfg.rope_base > 0.0)) {
    throw Error("Llama3Config: rope_base " + std::to_string(cfg.rope_base) + " must be > 0");
  }
}

namespace {

const Llama3Config& checked(const Llama3Config& cfg) {
  check_config(cfg);
  return cfg;
}

double rescaled_theta(const Llama3Config& cfg) {
  if (cfg.orig_context_length == cfg.context_length) return cfg.rope_base;
  const double scaling_factor =
      static_cast<double>(cfg.context_length) / static_cast<double>(cfg.orig_context_length);
  return cfg.rope_base * scaling_factor;
}

std::vector<std::unique_ptr<llama3::TransformerBlock>> blocks(const Llama3Config& cfg, DType dtype,
                                                              Generator& generator) {
  std::vector<std::unique_ptr<llama3::TransformerBlock>> out;
  for (int64_t i = 0; i < cfg.n_layers; ++i) {
    out.push_back(std::make_unique<llama3::TransformerBlock>(
        cfg, dtype, generator, "TransformerBlock " + std::to_string(i)));
  }
  return out;
}

}  // namespace

namespace llama3 {

// --- RMSNorm -------------------------------------------------------------------------------------

RMSNorm::RMSNorm(int64_t emb_dim, double eps_, DType dtype, std::string name)
    : UnaryModule(std::move(name)), eps(eps_) {
  if (emb_dim <= 0) {
    throw Error("RMSNorm \"" + this->name() + "\": emb_dim " + std::to_string(emb_dim) +
                " must be positive");
  }
  weight = Parameter(Shape{emb_dim}, dtype, "weight");  // [C], ones
  weight.assign(std::vector<double>(static_cast<size_t>(emb_dim), 1.0));
  register_parameter("weight", &RMSNorm::weight);
}

Tensor RMSNorm::forward(const Tensor& x) const {
  NameScope scope(name(), x.tape());
  return rms_norm(x, x.tape().parameter(weight), Tensor(), eps);  // [.., C]
}

// --- GroupedQueryAttention -----------------------------------------------------------------------

GroupedQueryAttention::GroupedQueryAttention(const Llama3Config& cfg, DType dtype,
                                             Generator& generator, std::string name)
    : Module(std::move(name)),
      num_heads(checked(cfg).n_heads),
      num_kv_groups(cfg.n_kv_groups),
      head_dim(cfg.emb_dim / cfg.n_heads),
      W_key(cfg.emb_dim, num_kv_groups * head_dim, false, dtype, "W_key", generator),
      W_value(cfg.emb_dim, num_kv_groups * head_dim, false, dtype, "W_value", generator),
      W_query(cfg.emb_dim, cfg.emb_dim, false, dtype, "W_query", generator),
      out_proj(cfg.emb_dim, cfg.emb_dim, false, dtype, "out_proj", generator) {
  register_module("W_key", &GroupedQueryAttention::W_key);
  register_module("W_value", &GroupedQueryAttention::W_value);
  register_module("W_query", &GroupedQueryAttention::W_query);
  register_module("out_proj", &GroupedQueryAttention::out_proj);
}

Tensor GroupedQueryAttention::forward(const Tensor& x, const Tensor& cos, const Tensor& sin) const {
  return forward(x, cos, sin, false);
}

Tensor GroupedQueryAttention::forward(const Tensor& x, const Tensor& cos, const Tensor& sin,
                                      bool use_cache) const {
  NameScope scope(name(), x.tape());
  const int64_t b = x.size(0), num_tokens = x.size(1);
  Tensor queries = W_query(x);  // [B, T, C]
  Tensor keys = W_key(x);       // [B, T, G·D]
  Tensor values = W_value(x);   // [B, T, G·D]
  queries = transpose(reshape(queries, {b, num_tokens, num_heads, head_dim}), 1, 2);    // [B,H,T,D]
  keys = transpose(reshape(keys, {b, num_tokens, num_kv_groups, head_dim}), 1, 2);      // [B,G,T,D]
  values = transpose(reshape(values, {b, num_tokens, num_kv_groups, head_dim}), 1, 2);  // [B,G,T,D]
  keys = rope(keys, cos, sin);                                                   // [B, G, T, D]
  queries = rope(queries, cos, sin);                                             // [B, H, T, D]
  if (use_cache) return out_proj(cache_.attend(queries, keys, values, name()));  // [B, T, C]
  const Tensor context = grouped_query_attention(queries, keys, values);         // [B, H, T, D]
  return out_proj(reshape(transpose(context, 1, 2), {b, num_tokens, num_heads * head_dim}));
}

// --- TransformerBlock ----------------------------------------------------------------------------

TransformerBlock::TransformerBlock(const Llama3Config& cfg, DType dtype, Generator& generator,
                                   std::string name)
    : Module(std::move(name)),
      att(cfg, dtype, generator, "att"),
      ff(cfg.emb_dim, cfg.hidden_dim, dtype, generator, "ff"),
      norm1(cfg.emb_dim, 1e-5, dtype, "norm1"),
      norm2(cfg.emb_dim, 1e-5, dtype, "norm2") {
  register_module("att", &TransformerBlock::att);
  register_module("ff", &TransformerBlock::ff);
  register_module("norm1", &TransformerBlock::norm1);
  register_module("norm2", &TransformerBlock::norm2);
}

Tensor TransformerBlock::forward(const Tensor& x, const Tensor& cos, const Tensor& sin,
                                 bool use_cache) const {
  NameScope scope(name(), x.tape());
  const Tensor h = att.forward(norm1(x), cos, sin, use_cache) + x;  // [B, T, C]
  return ff(norm2(h)) + h;                                          // [B, T, C]
}

}  // namespace llama3

// --- Llama3Model ---------------------------------------------------------------------------------

Llama3Model::Llama3Model(const Llama3Config& cfg, DType dtype, Generator& generator,
                         std::string name)
    : Module(std::move(name)),
      cfg_(checked(cfg)),
      dtype_(dtype),
      rope_(compute_rope_params(cfg.emb_dim / cfg.n_heads, rescaled_theta(cfg), cfg.context_length,
                                cfg.rope_freq)),
      tok_emb(cfg.vocab_size, cfg.emb_dim, dtype, "tok_emb", generator),
      trf_blocks(blocks(cfg, dtype, generator), "trf_blocks"),
      final_norm(cfg.emb_dim, 1e-5, dtype, "final_norm"),
      out_head(cfg.emb_dim, cfg.vocab_size, false, dtype, "out_head", generator) {
  register_module("tok_emb", &Llama3Model::tok_emb);
  register_module("trf_blocks", &Llama3Model::trf_blocks);
  register_module("final_norm", &Llama3Model::final_norm);
  register_module("out_head", &Llama3Model::out_head);
}

double Llama3Model::rope_theta() const {
  return rescaled_theta(cfg_);
}

int64_t Llama3Model::count_parameters(const Llama3Config& cfg) {
  check_config(cfg);
  const int64_t c = cfg.emb_dim, d = cfg.emb_dim / cfg.n_heads, f = cfg.hidden_dim;
  const int64_t attention = 2 * c * c + 2 * c * cfg.n_kv_groups * d;
  const int64_t block = attention + 3 * c * f + 2 * c;
  return 2 * cfg.vocab_size * c + cfg.n_layers * block + c;
}

Tensor Llama3Model::forward(const Ids& in_idx) const {
  return forward(in_idx, false, false);
}

Tensor Llama3Model::forward(const Ids& in_idx, bool use_cache, bool last_position_only) const {
  const int64_t first = use_cache ? ptr_current_pos_ : 0;
  check_token_ids(name(), in_idx, cfg_.context_length, cfg_.vocab_size, first);
  if (use_cache) check_cached_call(name(), in_idx, trf_blocks[0].att.cache());
  const int64_t T = in_idx.size(1);
  NameScope scope(name(), current_tape());
  const auto [cos, sin] = rope_rows(rope_, T, dtype_, first);  // [T, D] each
  Tensor x = tok_emb(in_idx);                                  // [B, T, C]
  for (size_t i = 0; i < trf_blocks.size(); ++i) x = trf_blocks[i].forward(x, cos, sin, use_cache);
  if (use_cache) ptr_current_pos_ += T;
  if (last_position_only) x = narrow(x, 1, T - 1, 1);  // [B, 1, C]
  x = final_norm(x);                                   // [B, T or 1, C]
  return out_head(x);                                  // [B, T or 1, V]
}

void Llama3Model::reset_cache() const {
  for (size_t i = 0; i < trf_blocks.size(); ++i) trf_blocks[i].att.reset_cache();
  ptr_current_pos_ = 0;
}

void Llama3Model::reserve_cache(int64_t batch, int64_t tokens) const {
  for (size_t i = 0; i < trf_blocks.size(); ++i) {
    trf_blocks[i].att.cache().reserve(batch, cfg_.n_kv_groups, cfg_.emb_dim / cfg_.n_heads, tokens,
                                      dtype_);
  }
}

}  // namespace tapegrad::nn
