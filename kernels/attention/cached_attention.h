// Attention of new queries over a key/value cache (generation with a KV cache): the book's
// softmax(q·kᵀ / √D_h) with the causal mask offset by the tokens already cached, times v.
#pragma once

#include <cstdint>

namespace tapegrad {

// The keys and values of a cache, [B, G, window, D_h] each, of which positions [0, length) hold
// tokens (oldest first). G = kv_heads, or heads when kv_heads is 0; with grouped-query attention
// (G < heads, heads a multiple of G) query head h reads kv head h / (heads / G), so the shared
// keys and values are never repeated.
template <class T>
struct KVCacheView {
  const T* k;
  const T* v;
  int64_t batch;
  int64_t heads;
  int64_t window;
  int64_t head_dim;
  int64_t length;
  int64_t kv_heads = 0;
};

// q [B, T, H·D_h] (the query projection, heads side by side), the T newest tokens of the cache
// (cache.length ≥ T): query i sits at position cache.length − T + i and sees keys 0 .. that
// position. out [B, T, H·D_h] gets softmax(q·kᵀ / √D_h)·v per head, heads merged back (the
// book's context_vec before out_proj). Scores, softmax and the weighted sum run in T's
// precision in the book's order: scores, then / √D_h, then max-subtracted exp over the row.
// Parallel over (batch, head) pairs.
template <class T>
void cached_attention(const T* q, const KVCacheView<T>& cache, T* out, int64_t new_tokens);

extern template void cached_attention<float>(const float*, const KVCacheView<float>&, float*,
                                             int64_t);
extern template void cached_attention<double>(const double*, const KVCacheView<double>&, double*,
                                              int64_t);

}  // namespace tapegrad
