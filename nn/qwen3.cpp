// Qwen3 (the book's qwen3.py): RMSNorm, FeedForward, GroupedQueryAttention, TransformerBlock,
// Qwen3Model, built in the book's order.
#include <tapegrad/nn/qwen3.h>

#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/scope.h>
#include <tapegrad/nn/model_checks.h>

namespace tapegrad::nn {

void check_config(const Qwen3Config& cfg) {
  check_positive("Qwen3Config", "vocab_size", cfg.vocab_size);
  check_positive("Qwen3Config", "context_length", cfg.context_length);
  check_positive("Qwen3Config", "emb_dim", cfg.emb_dim);
  check_positive("Qwen3Config", "n_heads", cfg.n_heads);
  check_positive("Qwen3Config", "n_layers", cfg.n_layers);
  check_positive("Qwen3Config", "hidden_dim", cfg.hidden_dim);
  check_positive("Qwen3Config", "n_kv_groups", cfg.n_kv_groups);
  if (cfg.head_dim < 0) {
    throw Error("Qwen3Config: head_dim " + std::to_string(cfg.head_dim) +
                " must be positive (or 0: emb_dim / n_heads)");
  }
  if (cfg.n_heads % cfg.n_kv_groups != 0) {
    throw Error("Qwen3Config: n_heads " + std::to_string(cfg.n_heads) +
                " must be divisible by n_kv_groups " + std::to_string(cfg.n_kv_groups));
  }
  if (cfg.head_dim == 0 && cfg.emb_dim % cfg.n_heads != 0) {
    throw Error("Qwen3Config: emb_dim " + std::to_string(cfg.emb_dim) +
                " must be divisible by n_heads " + std::to_string(cfg.n_heads) +
                " when head_dim is 0");
  }
  if (cfg.resolved_head_dim() % 2 != 0) {
    throw Error("Qwen3Config: the head dim " + std::to_string(cfg.resolved_head_dim()) +
                " must be even (RoPE rotates halves)");
  }
  if (!(cfg.rope_base > 0.0)) {
    throw Error("Qwen3Config: rope_base " + std::to_string(cfg.rope_base) + " must be > 0");
  }
}

namespace {

const Qwen3Config& checked(const Qwen3Config& cfg) {
  check_config(cfg);
  return cfg;
}

std::vector<std::unique_ptr<qwen3::TransformerBlock>> blocks(const Qwen3Config& cfg, DType dtype,
                                                             Generator& generator) {
  std::vector<std::unique_ptr<qwen3::TransformerBlock>> out;
  for (int64_t i = 0; i < cfg.n_layers; ++i) {
    out.push_back(std::make_unique<qwen3::TransformerBlock>(
        cfg, dtype, generator, "TransformerBlock " + std::to_string(i)));
  }
  return out;
}

}  // namespace

std::pair<Tensor, Tensor> rope_rows(const RopeTables& rope, int64_t T, DType dtype, int64_t first) {
  const int64_t d = rope.head_dim;
  const auto begin = static_cast<size_t>(first * d), rows = static_cast<size_t>(T * d);
  if (dtype == DType::Float32) {
    return {from_data(Shape{T, d}, std::span<const float>(rope.cos).subspan(begin, rows)),
            from_data(Shape{T, d}, std::span<const float>(rope.sin).subspan(begin, rows))};
  }
  const std::vector<double> cos_rows(rope.cos.begin() + begin, rope.cos.begin() + begin + rows);
  const std::vector<double> sin_rows(rope.sin.begin() + begin, rope.sin.begin() + begin + rows);
  return {from_values(Shape{T, d}, cos_rows, dtype), from_values(Shape{T, d}, sin_rows, dtype)};
}

// --- RMSNorm -------------------------------------------------------------------------------------

RMSNorm::RMSNorm(int64_t emb_dim, double eps_, bool bias, DType dtype, std::string name)
    : UnaryModule(std::move(name)), eps(eps_) {
  if (emb_dim <= 0) {
    throw Error("RMSNorm \"" + this->name() + "\": emb_dim " + std::to_string(emb_dim) +
                " must be positive");
  }
  scale = Parameter(Shape{emb_dim}, dtype, "scale");  // [C], ones
  scale.assign(std::vector<double>(static_cast<size_t>(emb_dim), 1.0));
  register_parameter("scale", &RMSNorm::scale);
  if (bias) {
    shift = Parameter(Shape{emb_dim}, dtype, "shift");  // [C], zeros
    register_parameter("shift", &RMSNorm::shift);
  }
}

Tensor RMSNorm::forward(const Tensor& x) const {
  NameScope scope(name(), x.tape());
  Tape& tape = x.tape();
  const Tensor shift_tensor = shift.defined() ? tape.parameter(shift) : Tensor();
  return rms_norm(x, tape.parameter(scale), shift_tensor, eps);  // [.., C]
}

namespace qwen3 {

// --- FeedForward ---------------------------------------------------------------------------------

FeedForward::FeedForward(const Qwen3Config& cfg, DType dtype, Generator& generator,
                         std::string name)
    : FeedForward(cfg.emb_dim, cfg.hidden_dim, dtype, generator, std::move(name)) {}

FeedForward::FeedForward(int64_t emb_dim, int64_t hidden_dim, DType dtype, Generator& generator,
                         std::string name)
    : UnaryModule(std::move(name)),
      fc1(emb_dim, hidden_dim, false, dtype, "fc1", generator),
      fc2(emb_dim, hidden_dim, false, dtype, "fc2", generator),
      fc3(hidden_dim, emb_dim, false, dtype, "fc3", generator) {
  register_module("fc1", &FeedForward::fc1);
  register_module("fc2", &FeedForward::fc2);
  register_module("fc3", &FeedForward::fc3);
}

Tensor FeedForward::forward(const Tensor& x) const {
  NameScope scope(name(), x.tape());
  const Tensor x_fc1 = fc1(x);      // [B, T, F]
  const Tensor x_fc2 = fc2(x);      // [B, T, F]
  return fc3(silu(x_fc1) * x_fc2);  // [B, T, F] -> [B, T, C]
}

// --- GroupedQueryAttention -----------------------------------------------------------------------

GroupedQueryAttention::GroupedQueryAttention(const Qwen3Config& cfg, DType dtype,
                                             Generator& generator, std::string name)
    : Module(std::move(name)),
      num_heads(checked(cfg).n_heads),
      num_kv_groups(cfg.n_kv_groups),
      head_dim(cfg.resolved_head_dim()),
      qk_norm(cfg.qk_norm),
      W_query(cfg.emb_dim, num_heads * head_dim, false, dtype, "W_query", generator),
      W_key(cfg.emb_dim, num_kv_groups * head_dim, false, dtype, "W_key", generator),
      W_value(cfg.emb_dim, num_kv_groups * head_dim, false, dtype, "W_value", generator),
      out_proj(num_heads * head_dim, cfg.emb_dim, false, dtype, "out_proj", generator),
      q_norm(head_dim, 1e-6, false, dtype, "q_norm"),
      k_norm(head_dim, 1e-6, false, dtype, "k_norm") {
  register_module("W_query", &GroupedQueryAttention::W_query);
  register_module("W_key", &GroupedQueryAttention::W_key);
  register_module("W_value", &GroupedQueryAttention::W_value);
  register_module("out_proj", &GroupedQueryAttention::out_proj);
  if (qk_norm) {
    register_module("q_norm", &GroupedQueryAttention::q_norm);
    register_module("k_norm", &GroupedQueryAttention::k_norm);
  }
}

Tensor GroupedQueryAttention::forward(const Tensor& x, const Tensor& cos, const Tensor& sin) const {
  return forward(x, cos, sin, false);
}

Tensor GroupedQueryAttention::forward(const Tensor& x, const Tensor& cos, const Tensor& sin,
                                      bool use_cache) const {
  NameScope scope(name(), x.tape());
  const int64_t b = x.size(0), num_tokens = x.size(1);
  Tensor queries = W_query(x);  // [B, T, H·D]
  Tensor keys = W_key(x);       // [B, T, G·D]
  Tensor values = W_value(x);   // [B, T, G·D]
  queries = transpose(reshape(queries, {b, num_tokens, num_heads, head_dim}), 1, 2);    // [B,H,T,D]
  keys = transpose(reshape(keys, {b, num_tokens, num_kv_groups, head_dim}), 1, 2);      // [B,G,T,D]
  values = transpose(reshape(values, {b, num_tokens, num_kv_groups, head_dim}), 1, 2);  // [B,G,T,D]
  if (qk_norm) {
    queries = q_norm(queries);  // [B, H, T, D]
    keys = k_norm(keys);        // [B, G, T, D]
  }
  queries = rope(queries, cos, sin);                                             // [B, H, T, D]
  keys = rope(keys, cos, sin);                                                   // [B, G, T, D]
  if (use_cache) return out_proj(cache_.attend(queries, keys, values, name()));  // [B, T, C]
  const Tensor context = grouped_query_attention(queries, keys, values);         // [B, H, T, D]
  return out_proj(reshape(transpose(context, 1, 2), {b, num_tokens, num_heads * head_dim}));
}

// --- TransformerBlock ----------------------------------------------------------------------------

TransformerBlock::TransformerBlock(const Qwen3Config& cfg, DType dtype, Generator& generator,
                                   std::string name)
    : Module(std::move(name)),
      att(cfg, dtype, generator, "att"),
      ff(cfg, dtype, generator, "ff"),
      norm1(cfg.emb_dim, 1e-6, false, dtype, "norm1"),
      norm2(cfg.emb_dim, 1e-6, false, dtype, "norm2") {
  register_module("att", &TransformerBlock::att);
  register_module("ff", &TransformerBlock::ff);
  register_module("norm1", &TransformerBlock::norm1);
  register_module("norm2", &TransformerBlock::norm2);
}

Tensor TransformerBlock::forward(const Tensor& x, const Tensor& cos, const Tensor& sin,
                                 bool use_cache) const {
  NameScope scope(name(), x.tape());
  Tensor shortcut = x;                                    // [B, T, C]
  Tensor h = att.forward(norm1(x), cos, sin, use_cache);  // [B, T, C]
  h = h + shortcut;                                       // [B, T, C]
  shortcut = h;
  return ff(norm2(h)) + shortcut;  // [B, T, C]
}

}  // namespace qwen3

// --- Qwen3Model ----------------------------------------------------------------------------------

Qwen3Model::Qwen3Model(const Qwen3Config& cfg, DType dtype, Generator& generator, std::string name)
    : Module(std::move(name)),
      cfg_(checked(cfg)),
      dtype_(dtype),
      rope_(compute_rope_params(cfg.resolved_head_dim(), cfg.rope_base, cfg.context_length)),
      tok_emb(cfg.vocab_size, cfg.emb_dim, dtype, "tok_emb", generator),
      trf_blocks(blocks(cfg, dtype, generator), "trf_blocks"),
      final_norm(cfg.emb_dim, 1e-6, false, dtype, "final_norm"),
      out_head(cfg.emb_dim, cfg.vocab_size, false, dtype, "out_head", generator) {
  register_module("tok_emb", &Qwen3Model::tok_emb);
  register_module("trf_blocks", &Qwen3Model::trf_blocks);
  register_module("final_norm", &Qwen3Model::final_norm);
  register_module("out_head", &Qwen3Model::out_head);
}

int64_t Qwen3Model::count_parameters(const Qwen3Config& cfg) {
  check_config(cfg);
  const int64_t c = cfg.emb_dim, d = cfg.resolved_head_dim(), f = cfg.hidden_dim;
  const int64_t attention = c * cfg.n_heads * d + 2 * c * cfg.n_kv_groups * d +
                            cfg.n_heads * d * c + (cfg.qk_norm ? 2 * d : 0);
  const int64_t block = attention + 3 * c * f + 2 * c;
  return 2 * cfg.vocab_size * c + cfg.n_layers * block + c;
}

Tensor Qwen3Model::forward(const Ids& in_idx) const {
  return forward(in_idx, false, false);
}

Tensor Qwen3Model::forward(const Ids& in_idx, bool use_cache, bool last_position_only) const {
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

void Qwen3Model::reset_cache() const {
  for (size_t i = 0; i < trf_blocks.size(); ++i) trf_blocks[i].att.reset_cache();
  ptr_current_pos_ = 0;
}

void Qwen3Model::reserve_cache(int64_t batch, int64_t tokens) const {
  for (size_t i = 0; i < trf_blocks.size(); ++i) {
    trf_blocks[i].att.cache().reserve(batch, cfg_.n_kv_groups, cfg_.resolved_head_dim(), tokens,
                                      dtype_);
  }
}

}  // namespace tapegrad::nn
