// A grouped-query attention's KV cache: [B, G, capacity, D] buffers, appended to in place.
#include <tapegrad/nn/gqa_cache.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include <tapegrad/graph/error.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad::nn {

template <class T>
std::vector<T>& GQAKVCache::keys_of() {
  if constexpr (std::is_same_v<T, float>) {
    return k32_;
  } else {
    return k64_;
  }
}

template <class T>
std::vector<T>& GQAKVCache::values_of() {
  if constexpr (std::is_same_v<T, float>) {
    return v32_;
  } else {
    return v64_;
  }
}

// New buffers of `capacity` positions holding the cached tokens.
template <class T>
void GQAKVCache::grow(int64_t capacity) {
  const int64_t rows = batch_ * kv_heads_;
  for (std::vector<T>* buffer : {&keys_of<T>(), &values_of<T>()}) {
    std::vector<T> bigger(static_cast<size_t>(rows * capacity * head_dim_), T{0});
    for (int64_t r = 0; r < rows && length_ > 0; ++r) {
      std::memcpy(bigger.data() + r * capacity * head_dim_,
                  buffer->data() + r * capacity_ * head_dim_,
                  static_cast<size_t>(length_ * head_dim_) * sizeof(T));
    }
    buffer->swap(bigger);
  }
  capacity_ = capacity;
}

void GQAKVCache::reserve(int64_t batch, int64_t kv_heads, int64_t head_dim, int64_t tokens,
                         DType dtype) {
  if (dtype != DType::Float32 && dtype != DType::Float64) {
    throw Error("GQAKVCache: the cache holds float32 or float64 keys, not " +
                std::string(dtype_name(dtype)));
  }
  const bool same =
      batch == batch_ && kv_heads == kv_heads_ && head_dim == head_dim_ && dtype == dtype_;
  if (!same) {
    if (length_ > 0) {
      throw Error("GQAKVCache: reserve for batch " + std::to_string(batch) +
                  " while the cache holds tokens of batch " + std::to_string(batch_) +
                  ": reset it first");
    }
    k32_ = {}, v32_ = {}, k64_ = {}, v64_ = {};
    batch_ = batch, kv_heads_ = kv_heads, head_dim_ = head_dim, dtype_ = dtype, capacity_ = 0;
  }
  if (tokens <= capacity_) return;
  if (dtype == DType::Float32) {
    grow<float>(tokens);
  } else {
    grow<double>(tokens);
  }
}

Tensor GQAKVCache::attend(const Tensor& queries, const Tensor& keys, const Tensor& values,
                          const std::string& who) {
  const int64_t B = queries.size(0), H = queries.size(1), T = queries.size(2);
  const int64_t D = queries.size(3), G = keys.size(1);
  if (length_ > 0 && (B != batch_ || G != kv_heads_ || D != head_dim_ || keys.dtype() != dtype_)) {
    throw Error(who + ": queries " + queries.shape().str() +
                " do not fit the KV cache, which holds " + std::to_string(length_) +
                " tokens of batch " + std::to_string(batch_) + ": call reset_cache() first");
  }
  if (length_ == 0) {
    reserve(B, G, D, T, keys.dtype());  // a new batch or dtype starts afresh
  } else if (length_ + T > capacity_) {
    reserve(B, G, D, std::max(length_ + T, 2 * capacity_), keys.dtype());
  }
  Tensor context;
  auto run = [&]<class T_>() {
    std::vector<T_>& k = keys_of<T_>();
    std::vector<T_>& v = values_of<T_>();
    // keys [B, G, T, D] -> cache[:, :, length:length + T, :], one block per (batch, kv head).
    const T_* kn = keys.data<T_>();
    const T_* vn = values.data<T_>();
    const size_t block = static_cast<size_t>(T * D) * sizeof(T_);
    for (int64_t r = 0; r < B * G; ++r) {
      const int64_t dst = (r * capacity_ + length_) * D;
      std::memcpy(k.data() + dst, kn + r * T * D, block);
      std::memcpy(v.data() + dst, vn + r * T * D, block);
    }
    length_ += T;
    if (length_ == T) {
      // Nothing cached before: the uncached attention, the same op and numbers.
      context = grouped_query_attention(queries, keys, values);  // [B, H, T, D]
      context = reshape(transpose(context, 1, 2), {B, T, H * D});
    } else {
      const Tensor q = reshape(transpose(queries, 1, 2), {B, T, H * D});  // [B, T, H·D]
      const KVCacheRef<T_> cache{k, v, B, H, capacity_, D, length_, G};
      context = cached_attention(q, cache);  // [B, T, H·D]
    }
  };
  if (keys.dtype() == DType::Float32) {
    run.template operator()<float>();
  } else {
    run.template operator()<double>();
  }
  return context;
}

void check_cached_call(const std::string& model, const Ids& in_idx, const GQAKVCache& cache) {
  if (grad_enabled()) {
    throw Error(model +
                ": the KV cache is for inference; run the cached forward under NoGradGuard "
                "(torch.no_grad())");
  }
  if (cache.length() > 0 && in_idx.size(0) != cache.batch()) {
    throw Error(model + ": in_idx " + in_idx.shape().str() + " has batch " +
                std::to_string(in_idx.size(0)) + ", but the KV cache holds " +
                std::to_string(cache.length()) + " tokens of batch " +
                std::to_string(cache.batch()) + ": call reset_cache() first");
  }
}

}  // namespace tapegrad::nn
