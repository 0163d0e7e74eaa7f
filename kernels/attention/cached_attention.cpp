// Attention over a key/value cache: one (batch, head) pair per part, scores kept in a row buffer.
#include <tapegrad/kernels/attention/cached_attention.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/scratch.h>

namespace tapegrad {

struct ScoreRow;  // thread_scratch's tag: one row of scores

template <class T>
void cached_attention(const T* q, const KVCacheView<T>& c, T* out, int64_t new_tokens) {
  const int64_t H = c.heads, Dh = c.head_dim, D = H * Dh, Tn = new_tokens;
  const int64_t G = c.kv_heads > 0 ? c.kv_heads : H;
  const int64_t first = c.length - Tn;  // position of the first new query
  const T scale = static_cast<T>(std::sqrt(static_cast<double>(Dh)));
  const double cost = 4.0 * static_cast<double>(Tn * c.length * Dh);
  parallel_for(c.batch * H, cost, [&](int, int64_t begin, int64_t end) {
    // One row of scores per part: the thread's own and as long as the window (not the tokens cached
    // so far, which grow every step), so decode steps allocate nothing after the first.
    T* scores = detail::thread_scratch<ScoreRow, T>(static_cast<size_t>(c.window));
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / H, h = bh % H;
      const int64_t kv = b * G + h / (H / G);        // the kv head query head h reads
      const T* keys = c.k + (kv * c.window) * Dh;    // [window, D_h]
      const T* values = c.v + (kv * c.window) * Dh;  // [window, D_h]
      for (int64_t i = 0; i < Tn; ++i) {
        const T* qi = q + (b * Tn + i) * D + h * Dh;  // [D_h]
        T* oi = out + (b * Tn + i) * D + h * Dh;      // [D_h]
        const int64_t seen = first + i + 1;           // keys 0 .. first + i; the rest are masked
        T max_score = -std::numeric_limits<T>::infinity();
        for (int64_t j = 0; j < seen; ++j) {
          const T* kj = keys + j * Dh;
          T s = 0;
          for (int64_t d = 0; d < Dh; ++d) s += qi[d] * kj[d];
          s /= scale;
          scores[j] = s;
          max_score = std::max(max_score, s);
        }
        T sum = 0;
        for (int64_t j = 0; j < seen; ++j) {
          const T e = std::exp(scores[j] - max_score);
          scores[j] = e;
          sum += e;
        }
        std::fill(oi, oi + Dh, T{0});
        for (int64_t j = 0; j < seen; ++j) {
          const T w = scores[j] / sum;
          const T* vj = values + j * Dh;
          for (int64_t d = 0; d < Dh; ++d) oi[d] += w * vj[d];
        }
      }
    }
  });
}

template void cached_attention<float>(const float*, const KVCacheView<float>&, float*, int64_t);
template void cached_attention<double>(const double*, const KVCacheView<double>&, double*, int64_t);

}  // namespace tapegrad
