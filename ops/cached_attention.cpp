// cached_attention: the new tokens' queries over a KV cache (generation), for inference only.
#include <tapegrad/kernels/attention/cached_attention.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

struct CachedAttentionState {
  int64_t heads;
  int64_t length;  // tokens in the cache, the new ones included
};

const OpDef kCachedAttention{.name = "cached_attention",
                             .backward = inference_only_backward,
                             .arguments = [](const Tape&, const Node& n) {
                               const auto& s = n.state_as<CachedAttentionState>();
                               return "H = " + std::to_string(s.heads) +
                                      ", cached = " + std::to_string(s.length);
                             }};
TAPEGRAD_REGISTER_OP(kCachedAttention);

template <class T>
Tensor run(const Tensor& q, const KVCacheRef<T>& c) {
  check_inference_only("cached_attention", q);
  const auto fail = [&](const std::string& what) {
    throw_unary_error("cached_attention", q,
                      "cache [" + std::to_string(c.batch) + ", " + std::to_string(c.heads) + ", " +
                          std::to_string(c.window) + ", " + std::to_string(c.head_dim) +
                          "] holding " + std::to_string(c.length) + ": " + what);
  };
  if (q.dtype() != dtype_of<T>()) {
    fail(std::string("q is ") + dtype_name(q.dtype()) + ", the cache " + dtype_name(dtype_of<T>()));
  }
  if (c.batch < 1 || c.heads < 1 || c.window < 1 || c.head_dim < 1) {
    fail("the cache's sizes must be positive");
  }
  const int64_t kv_heads = c.kv_heads == 0 ? c.heads : c.kv_heads;
  if (kv_heads < 1 || c.heads % kv_heads != 0) {
    fail("kv_heads " + std::to_string(c.kv_heads) + " must divide heads");
  }
  const size_t cache_size = static_cast<size_t>(c.batch * kv_heads * c.window * c.head_dim);
  if (c.keys.size() != cache_size || c.values.size() != cache_size) {
    fail("keys hold " + std::to_string(c.keys.size()) + " and values " +
         std::to_string(c.values.size()) + " elements, not " + std::to_string(cache_size));
  }
  if (q.rank() != 3 || q.size(0) != c.batch || q.size(2) != c.heads * c.head_dim) {
    fail("q must be [" + std::to_string(c.batch) + ", T, " + std::to_string(c.heads * c.head_dim) +
         "] (batch, new tokens, heads · head_dim)");
  }
  const int64_t T_new = q.size(1);
  if (T_new < 1 || c.length < T_new || c.length > c.window) {
    fail("the cache must hold the " + std::to_string(T_new) +
         " new tokens, within its window (1 <= T <= length <= window)");
  }
  Tensor y = q.tape().record(kCachedAttention, q.shape(), q.dtype(), {q},
                             CachedAttentionState{c.heads, c.length});  // [B, T, H·D_h]
  const KVCacheView<T> view{c.keys.data(), c.values.data(), c.batch,  c.heads,
                            c.window,      c.head_dim,      c.length, kv_heads};
  cached_attention<T>(q.data<T>(), view, output_data<T>(y), T_new);
  return y;
}

}  // namespace

Tensor cached_attention(const Tensor& q, const KVCacheRef<float>& cache) {
  return run(q, cache);
}

Tensor cached_attention(const Tensor& q, const KVCacheRef<double>& cache) {
  return run(q, cache);
}

}  // namespace tapegrad
