// Attention over a key/value cache: the (batch, head) pairs split over the threads, scores kept
// in a row buffer per thread; each pair's arithmetic is kernels/attention/attention_isa.cpp's,
// built once per CPU level, the level in use's.
#include <tapegrad/kernels/attention/cached_attention.h>

#include <cmath>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/attention/attention_isa.h>
#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/scratch.h>

namespace tapegrad {

struct ScoreRow;  // thread_scratch's tag: one row of scores

namespace {

using detail::attention::CachedHead;

template <class T>
void run_head(const CachedHead<T>& head) {
#if defined(__x86_64__)
  const CpuCapability level = cpu_capability();
  if (level >= CpuCapability::Avx512) return detail::attention::attention_avx512::cached_head(head);
  if (level == CpuCapability::Avx2) return detail::attention::attention_avx2::cached_head(head);
#endif
  detail::attention::attention_baseline::cached_head(head);
}

}  // namespace

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
      CachedHead<T> head{};
      head.new_tokens = Tn, head.first = first, head.head_dim = Dh, head.ld = D;
      head.scale = scale;
      head.q = q + b * Tn * D + h * Dh, head.out = out + b * Tn * D + h * Dh;
      head.keys = keys, head.values = values, head.scores = scores;
      run_head(head);
    }
  });
}

template void cached_attention<float>(const float*, const KVCacheView<float>&, float*, int64_t);
template void cached_attention<double>(const double*, const KVCacheView<double>&, double*, int64_t);

}  // namespace tapegrad
