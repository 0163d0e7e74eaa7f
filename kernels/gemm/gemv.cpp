// The one-row matrix-vector kernel: eight rows of W at a time against one x held in L1.
#include <tapegrad/kernels/gemm/gemv.h>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/vec.h>

namespace tapegrad {

namespace {

using detail::kLanes;
using detail::Vec;
using detail::vload;

constexpr int64_t L = kLanes<float>;

// The sum of a vector's lanes, in a fixed order (the same bits wherever it runs).
inline float lane_sum(const Vec<float>& v) {
  float s = 0.0f;
  for (int64_t l = 0; l < L; ++l) s += v[l];
  return s;
}

// R rows of W starting at row o: y[o + r] = W[o + r, :]·x. Two accumulators per row keep two
// independent FMA chains in flight; the tail below one vector is summed in scalar. `ahead`
// (elements) is where the software prefetch reads, relative to what is loaded: the next block of
// rows, so its lines are on their way while this block is summed (0 where there is none). The
// prefetch changes no arithmetic.
template <int R>
inline void rows_dot(const float* w, const float* x, float* y, int64_t o, int64_t in,
                     int64_t ahead) {
  Vec<float> acc0[R], acc1[R];
  for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = Vec<float>{};
  int64_t i = 0;
  for (; i + 2 * L <= in; i += 2 * L) {
    Vec<float> x0, x1;
    vload(x0, x + i);
    vload(x1, x + i + L);
    for (int r = 0; r < R; ++r) {
      const float* row = w + (o + r) * in + i;
      __builtin_prefetch(row + ahead);
      __builtin_prefetch(row + ahead + L);
      Vec<float> w0, w1;
      vload(w0, row);
      vload(w1, row + L);
      acc0[r] += w0 * x0;
      acc1[r] += w1 * x1;
    }
  }
  for (; i + L <= in; i += L) {
    Vec<float> x0;
    vload(x0, x + i);
    for (int r = 0; r < R; ++r) {
      Vec<float> w0;
      vload(w0, w + (o + r) * in + i);
      acc0[r] += w0 * x0;
    }
  }
  for (int r = 0; r < R; ++r) {
    float s = lane_sum(acc0[r] + acc1[r]);
    const float* row = w + (o + r) * in;
    for (int64_t j = i; j < in; ++j) s += row[j] * x[j];
    y[o + r] = s;
  }
}

void gemv_rows(const float* w, const float* x, float* y, int64_t begin, int64_t end, int64_t in) {
  // Eight rows in flight: eight streams keep more cache misses outstanding than one or four.
  int64_t o = begin;
  for (; o + 8 <= end; o += 8) rows_dot<8>(w, x, y, o, in, o + 16 <= end ? 8 * in : 0);
  for (; o < end; ++o) rows_dot<1>(w, x, y, o, in, 0);
}

}  // namespace

void gemv(const float* w, const float* x, const float* bias, float* y, int64_t out, int64_t in) {
  // Parts split at multiples of 8 rows. Each row's sum is the same whichever block kernel or
  // part computes it (rows are independent), so the bits do not depend on the thread count.
  // The cost is counted in memory time, not multiply-adds (parallel_for's unit is a flop): a
  // 64-byte line from DRAM takes as long as ~64 flops, so even a [768, 768] product, ~0.2 ms
  // of streaming on one core, is worth a second thread.
  const int64_t blocks = (out + 7) / 8;
  parallel_for(blocks, 16.0 * 8.0 * static_cast<double>(in), [&](int, int64_t b0, int64_t b1) {
    const int64_t begin = b0 * 8;
    const int64_t end = b1 * 8 < out ? b1 * 8 : out;
    gemv_rows(w, x, y, begin, end, in);
    if (bias != nullptr) {
      for (int64_t o = begin; o < end; ++o) y[o] += bias[o];
    }
  });
}

}  // namespace tapegrad
