// The chapter 3 attention modules: the book's classes, parameters drawn in the book's order.
#include <tapegrad/nn/attention.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/scope.h>

namespace tapegrad::nn {

namespace {

// torch.rand(shape) into a new Parameter: the book's nn.Parameter(torch.rand(d_in, d_out)).
Parameter rand_parameter(const Shape& shape, DType dtype, const std::string& name,
                         Generator& generator) {
  Parameter p(shape, dtype, name);
  if (dtype == DType::Float32) {
    generator.uniform(p.data<float>(), p.numel());
  } else {
    generator.uniform(p.data<double>(), p.numel());
  }
  return p;
}

Tensor named(Tensor t, const char* name) {
  t.set_name(name);
  return t;
}

// torch.triu(torch.ones(T, T), diagonal=1): the book's "mask" buffer, 1 above the diagonal.
Parameter causal_mask_buffer(int64_t context_length, DType dtype) {
  Parameter mask(Shape{context_length, context_length}, dtype, "mask");  // [T, T]
  std::vector<double> values(static_cast<size_t>(context_length * context_length), 0.0);
  for (int64_t i = 0; i < context_length; ++i) {
    for (int64_t j = i + 1; j < context_length; ++j) {
      values[static_cast<size_t>(i * context_length + j)] = 1.0;
    }
  }
  mask.assign(values);
  return mask;
}

// Checks run before any member is built (so before anything is drawn); returns the name.
std::string checked(std::string name, int64_t d_out, int64_t num_heads, double dropout,
                    bool split) {
  if (num_heads <= 0 || (split && d_out % num_heads != 0)) {
    throw Error(name + ": d_out " + std::to_string(d_out) + " must be divisible by num_heads " +
                std::to_string(num_heads));
  }
  check_dropout_probability(name, dropout);
  return name;
}

// The book's `x.shape` unpacking `b, num_tokens, d_in = x.shape`, with the mask's limit.
void check_batch_input(const std::string& module, const Tensor& x, int64_t d_in,
                       int64_t context_length) {
  if (x.rank() != 3 || x.size(2) != d_in) {
    throw Error(module + ": input " + x.shape().str() + " must be [B, T, " + std::to_string(d_in) +
                "] (batch, tokens, d_in)");
  }
  if (x.size(1) > context_length) {
    throw Error(module + ": input " + x.shape().str() + " has " + std::to_string(x.size(1)) +
                " tokens, more than context_length " + std::to_string(context_length));
  }
}

void check_sequence_input(const std::string& module, const Tensor& x, int64_t d_in) {
  if (x.rank() != 2 || x.size(1) != d_in) {
    throw Error(module + ": input " + x.shape().str() + " must be [T, " + std::to_string(d_in) +
                "] (tokens, d_in; one sequence, no batch dim)");
  }
}

}  // namespace

// --- SelfAttention_v1 ----------------------------------------------------------------------------

SelfAttentionV1::SelfAttentionV1(int64_t d_in, int64_t d_out, DType dtype, Generator& generator,
                                 std::string name)
    : UnaryModule(std::move(name)),
      W_query(rand_parameter({d_in, d_out}, dtype, "W_query", generator)),   // [C_in, D]
      W_key(rand_parameter({d_in, d_out}, dtype, "W_key", generator)),       // [C_in, D]
      W_value(rand_parameter({d_in, d_out}, dtype, "W_value", generator)) {  // [C_in, D]
  register_parameter("W_query", &SelfAttentionV1::W_query);
  register_parameter("W_key", &SelfAttentionV1::W_key);
  register_parameter("W_value", &SelfAttentionV1::W_value);
}

Tensor SelfAttentionV1::forward(const Tensor& x) const {
  check_sequence_input(name(), x, W_query.shape()[0]);
  Tape& tape = x.tape();
  NameScope scope(name(), tape);
  Tensor keys = named(matmul(x, tape.parameter(W_key)), "keys");          // [T, D]
  Tensor queries = named(matmul(x, tape.parameter(W_query)), "queries");  // [T, D]
  Tensor values = named(matmul(x, tape.parameter(W_value)), "values");    // [T, D]
  Tensor attn_scores = named(matmul(queries, t(keys)), "attn_scores");    // [T, T]
  const double d_k = static_cast<double>(keys.size(-1));
  Tensor attn_weights = named(softmax(attn_scores / std::sqrt(d_k), -1), "attn_weights");  // [T, T]
  return named(matmul(attn_weights, values), "context_vec");                               // [T, D]
}

// --- SelfAttention_v2 ----------------------------------------------------------------------------

SelfAttentionV2::SelfAttentionV2(int64_t d_in, int64_t d_out, bool qkv_bias, DType dtype,
                                 Generator& generator, std::string name)
    : UnaryModule(std::move(name)),
      W_query(d_in, d_out, qkv_bias, dtype, "W_query", generator),   // W [D, C_in]
      W_key(d_in, d_out, qkv_bias, dtype, "W_key", generator),       // W [D, C_in]
      W_value(d_in, d_out, qkv_bias, dtype, "W_value", generator) {  // W [D, C_in]
  register_module("W_query", &SelfAttentionV2::W_query);
  register_module("W_key", &SelfAttentionV2::W_key);
  register_module("W_value", &SelfAttentionV2::W_value);
}

Tensor SelfAttentionV2::forward(const Tensor& x) const {
  check_sequence_input(name(), x, W_query.in_features());
  NameScope scope(name(), x.tape());
  Tensor keys = named(W_key(x), "keys");                                // [T, D]
  Tensor queries = named(W_query(x), "queries");                        // [T, D]
  Tensor values = named(W_value(x), "values");                          // [T, D]
  Tensor attn_scores = named(matmul(queries, t(keys)), "attn_scores");  // [T, T]
  const double d_k = static_cast<double>(keys.size(-1));
  Tensor attn_weights = named(softmax(attn_scores / std::sqrt(d_k), -1), "attn_weights");  // [T, T]
  return named(matmul(attn_weights, values), "context_vec");                               // [T, D]
}

// --- CausalAttention -----------------------------------------------------------------------------

CausalAttention::CausalAttention(int64_t d_in, int64_t d_out, int64_t context_length,
                                 double dropout, bool qkv_bias, DType dtype, Generator& generator,
                                 std::string name)
    : UnaryModule(checked(std::move(name), d_out, 1, dropout, false)),
      W_query(d_in, d_out, qkv_bias, dtype, "W_query", generator),  // W [D, C_in]
      W_key(d_in, d_out, qkv_bias, dtype, "W_key", generator),      // W [D, C_in]
      W_value(d_in, d_out, qkv_bias, dtype, "W_value", generator),  // W [D, C_in]
      context_length_(context_length),
      dropout_(dropout),
      generator_(&generator) {
  // The book's order: W_query, W_key, W_value, dropout, then register_buffer("mask").
  register_module("W_query", &CausalAttention::W_query);
  register_module("W_key", &CausalAttention::W_key);
  register_module("W_value", &CausalAttention::W_value);
  register_buffer("mask", [context_length, dtype] {
    return causal_mask_buffer(context_length, dtype);  // [T, T]
  });
}

Tensor CausalAttention::forward(const Tensor& x) const {
  check_batch_input(name(), x, W_query.in_features(), context_length_);
  NameScope scope(name(), x.tape());
  Tensor keys = named(W_key(x), "keys");                                              // [B, T, D]
  Tensor queries = named(W_query(x), "queries");                                      // [B, T, D]
  Tensor values = named(W_value(x), "values");                                        // [B, T, D]
  Tensor attn_scores = named(matmul(queries, transpose(keys, 1, 2)), "attn_scores");  // [B, T, T]
  attn_scores = causal_mask(attn_scores);  // [B, T, T], -inf above the diagonal
  const double d_k = static_cast<double>(keys.size(-1));
  Tensor attn_weights =
      named(softmax(attn_scores / std::sqrt(d_k), -1), "attn_weights");  // [B, T, T]
  // nn.Dropout draws nothing when p == 0 or in eval mode: neither do we.
  if (training() && dropout_ > 0.0) {
    attn_weights = dropout(attn_weights, dropout_, true, *generator_);  // [B, T, T]
  }
  return named(matmul(attn_weights, values), "context_vec");  // [B, T, D]
}

// --- MultiHeadAttentionWrapper -------------------------------------------------------------------

namespace {

std::vector<std::unique_ptr<CausalAttention>> make_heads(const std::string& name, int64_t d_in,
                                                         int64_t d_out, int64_t context_length,
                                                         double dropout, int64_t num_heads,
                                                         bool qkv_bias, DType dtype,
                                                         Generator& generator) {
  if (num_heads <= 0) {
    throw Error(name + ": num_heads " + std::to_string(num_heads) + " must be positive");
  }
  check_dropout_probability(name, dropout);
  // nn.ModuleList builds head 0's three layers, then head 1's, ...: the same draws here.
  std::vector<std::unique_ptr<CausalAttention>> heads;
  for (int64_t i = 0; i < num_heads; ++i) {
    heads.push_back(std::make_unique<CausalAttention>(d_in, d_out, context_length, dropout,
                                                      qkv_bias, dtype, generator,
                                                      "head " + std::to_string(i)));
  }
  return heads;
}

}  // namespace

MultiHeadAttentionWrapper::MultiHeadAttentionWrapper(int64_t d_in, int64_t d_out,
                                                     int64_t context_length, double dropout,
                                                     int64_t num_heads, bool qkv_bias, DType dtype,
                                                     Generator& generator, std::string name)
    : UnaryModule(std::move(name)),
      heads(make_heads(this->name(), d_in, d_out, context_length, dropout, num_heads, qkv_bias,
                       dtype, generator),
            "heads") {
  register_module("heads", &MultiHeadAttentionWrapper::heads);
}

Tensor MultiHeadAttentionWrapper::forward(const Tensor& x) const {
  NameScope scope(name(), x.tape());
  std::vector<Tensor> outputs;
  outputs.reserve(heads.size());
  for (size_t i = 0; i < heads.size(); ++i) outputs.push_back(heads[i](x));  // H x [B, T, D]
  return named(cat(outputs, -1), "context_vec");                             // [B, T, H*D]
}

// --- MultiHeadAttention --------------------------------------------------------------------------

MultiHeadAttention::MultiHeadAttention(int64_t d_in, int64_t d_out, int64_t context_length,
                                       double dropout, int64_t num_heads, bool qkv_bias,
                                       DType dtype, Generator& generator, std::string name)
    : UnaryModule(checked(std::move(name), d_out, num_heads, dropout, true)),
      W_query(d_in, d_out, qkv_bias, dtype, "W_query", generator),  // W [D, C_in]
      W_key(d_in, d_out, qkv_bias, dtype, "W_key", generator),      // W [D, C_in]
      W_value(d_in, d_out, qkv_bias, dtype, "W_value", generator),  // W [D, C_in]
      out_proj(d_out, d_out, true, dtype, "out_proj", generator),   // W [D, D], b [D]
      d_out_(d_out),
      num_heads_(num_heads),
      head_dim_(d_out / num_heads),
      context_length_(context_length),
      dropout_(dropout),
      generator_(&generator),
      window_(context_length) {
  // The book's order: W_query, W_key, W_value, out_proj, dropout, register_buffer("mask").
  register_module("W_query", &MultiHeadAttention::W_query);
  register_module("W_key", &MultiHeadAttention::W_key);
  register_module("W_value", &MultiHeadAttention::W_value);
  register_module("out_proj", &MultiHeadAttention::out_proj);
  register_buffer("mask", [context_length, dtype] {
    return causal_mask_buffer(context_length, dtype);  // [T, T]
  });
}

Tensor MultiHeadAttention::forward(const Tensor& x) const {
  check_batch_input(name(), x, W_query.in_features(), context_length_);
  if (cache_.mode == CacheMode::kCached) {
    throw Error(name() + ": uncached forward while the KV cache holds " +
                std::to_string(cache_.length) + " tokens: call reset_cache() first");
  }
  if (cache_.mode != CacheMode::kUncached) cache_.mode = CacheMode::kUncached;
  NameScope scope(name(), x.tape());
  Tensor keys = named(W_key(x), "keys");          // [B, T, D]
  Tensor queries = named(W_query(x), "queries");  // [B, T, D]
  Tensor values = named(W_value(x), "values");    // [B, T, D]
  // The book's split into H heads, q·kᵀ, causal mask, softmax(· / √D_h), dropout on the
  // weights, ·v and merge back, as one op (drawn as those ops). With dropout drawn it computes
  // exactly what they compute (bit for bit, torch's mask stream) keeping only the [B, H, T, T]
  // weights and the mask; in eval mode or with p == 0 (nn.Dropout draws nothing) it runs the
  // fused kernels, within float32 rounding of them, keeping one log-sum-exp per row.
  Tensor context_vec = named(causal_dot_product_attention(queries, keys, values, num_heads_,
                                                          dropout_, training(), *generator_),
                             "context_vec");  // [B, T, D]
  if (keep_attention_) {
    const int64_t B = x.size(0), T = x.size(1);
    kept_attention_ = {Shape{B, num_heads_, T, T}, causal_attention_weights(context_vec)};
  }
  return out_proj(context_vec);  // [B, T, D]
}

namespace {

template <class T>
std::vector<T>& cache_keys(std::vector<float>& k32, std::vector<double>& k64) {
  if constexpr (std::is_same_v<T, float>) {
    (void)k64;
    return k32;
  } else {
    (void)k32;
    return k64;
  }
}

}  // namespace

Tensor MultiHeadAttention::forward(const Tensor& x, bool use_cache) const {
  if (!use_cache) return forward(x);
  const int64_t d_in = W_query.in_features();
  if (x.rank() != 3 || x.size(2) != d_in) {
    throw Error(name() + ": input " + x.shape().str() + " must be [B, T, " + std::to_string(d_in) +
                "] (batch, new tokens, d_in)");
  }
  if (grad_enabled()) {
    throw Error(name() +
                ": the KV cache is for inference; run the cached forward under "
                "NoGradGuard (torch.no_grad())");
  }
  if (training() && dropout_ > 0.0) {
    throw Error(name() + ": the KV cache is for inference; call eval() first (dropout " +
                std::to_string(dropout_) + " in training mode)");
  }
  if (cache_.mode == CacheMode::kUncached) {
    throw Error(name() + ": cached forward after an uncached one: call reset_cache() first");
  }
  const int64_t B = x.size(0), T = x.size(1), H = num_heads_, Dh = head_dim_;
  if (cache_.mode == CacheMode::kCached && B != cache_.batch) {
    throw Error(name() + ": input " + x.shape().str() + " has batch " + std::to_string(B) +
                ", but the KV cache was made for batch " + std::to_string(cache_.batch) +
                ": call reset_cache() first");
  }
  if (T < 1 || T > window_) {
    throw Error(name() + ": input " + x.shape().str() + " has " + std::to_string(T) +
                " new tokens; the KV cache takes 1 to its window " + std::to_string(window_) +
                " at a time");
  }
  NameScope scope(name(), x.tape());
  Tensor keys = named(W_key(x), "keys");          // [B, T, D]
  Tensor queries = named(W_query(x), "queries");  // [B, T, D]
  Tensor values = named(W_value(x), "values");    // [B, T, D]
  const int64_t W = window_;
  Tensor context_vec;
  auto run = [&]<class T_>() {
    std::vector<T_>& k = cache_keys<T_>(cache_.k32, cache_.k64);  // [B, H, W, D_h]
    std::vector<T_>& v = cache_keys<T_>(cache_.v32, cache_.v64);  // [B, H, W, D_h]
    if (cache_.mode == CacheMode::kFresh) {
      // Buffers of an earlier generation with this batch and window are reused as they are:
      // only positions [0, length) are ever read.
      const size_t size = static_cast<size_t>(B * H * W * Dh);
      if (k.size() != size) {
        k.assign(size, T_{0});
        v.assign(size, T_{0});
      }
      cache_.batch = B;
      cache_.length = 0;
      cache_.mode = CacheMode::kCached;
    }
    // Overflow: shift the window left, dropping the oldest tokens (the book's sliding window).
    const int64_t overflow = std::max<int64_t>(0, cache_.length + T - W);
    if (overflow > 0) {
      for (int64_t bh = 0; bh < B * H; ++bh) {
        T_* kb = k.data() + bh * W * Dh;
        T_* vb = v.data() + bh * W * Dh;
        const size_t keep = static_cast<size_t>((cache_.length - overflow) * Dh);
        std::memmove(kb, kb + overflow * Dh, keep * sizeof(T_));
        std::memmove(vb, vb + overflow * Dh, keep * sizeof(T_));
      }
      cache_.length -= overflow;
    }
    // keys_new [B, T, H, D_h] -> cache[:, :, length:length + T, :]
    const T_* kn = keys.data<T_>();
    const T_* vn = values.data<T_>();
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t t = 0; t < T; ++t) {
        for (int64_t h = 0; h < H; ++h) {
          const int64_t src = (b * T + t) * H * Dh + h * Dh;
          const int64_t dst = ((b * H + h) * W + cache_.length + t) * Dh;
          std::memcpy(k.data() + dst, kn + src, static_cast<size_t>(Dh) * sizeof(T_));
          std::memcpy(v.data() + dst, vn + src, static_cast<size_t>(Dh) * sizeof(T_));
        }
      }
    }
    cache_.length += T;
    if (cache_.length == T) {
      // Nothing cached before these tokens: the uncached attention, the same op and numbers.
      context_vec = causal_dot_product_attention(queries, keys, values, num_heads_, dropout_, false,
                                                 *generator_);  // [B, T, D]
    } else {
      const KVCacheRef<T_> cache{k, v, B, H, W, Dh, cache_.length};
      context_vec = cached_attention(queries, cache);  // [B, T, D]
    }
  };
  if (x.dtype() == DType::Float32) {
    run.template operator()<float>();
  } else {
    run.template operator()<double>();
  }
  return out_proj(named(context_vec, "context_vec"));  // [B, T, D]
}

void MultiHeadAttention::reset_cache() const {
  cache_.batch = 0;
  cache_.length = 0;
  cache_.mode = CacheMode::kFresh;
}

void MultiHeadAttention::set_cache_window(int64_t window) {
  if (window < 1) {
    throw Error(name() + ": cache window " + std::to_string(window) + " must be >= 1");
  }
  if (cache_.length > 0) {
    throw Error(name() + ": set_cache_window while the KV cache holds " +
                std::to_string(cache_.length) + " tokens: call reset_cache() first");
  }
  window_ = window;
}

void MultiHeadAttention::keep_attention(bool keep) {
  keep_attention_ = keep;
  kept_attention_ = {};
}

const AttentionWeights& MultiHeadAttention::last_attention() const {
  if (!keep_attention_) {
    throw Error(name() + ".last_attention: keep_attention(true) was not called");
  }
  if (kept_attention_.values.empty()) {
    throw Error(name() + ".last_attention: no forward since keep_attention(true)");
  }
  return kept_attention_;
}

std::span<const double> AttentionWeights::sequence(int64_t b) const {
  if (shape.rank() != 4 || b < 0 || b >= shape.size(0)) {
    throw Error("AttentionWeights.sequence: batch row " + std::to_string(b) +
                " is outside the weights " + shape.str() + " ([B, H, T, T])");
  }
  const int64_t per_sequence = shape.numel() / shape.size(0);  // H * T * T
  return std::span<const double>(values).subspan(static_cast<size_t>(b * per_sequence),
                                                 static_cast<size_t>(per_sequence));
}

}  // namespace tapegrad::nn
