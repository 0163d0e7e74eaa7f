// multinomial: torch.multinomial(probs, num_samples) on CPU, drawing the same stream as torch.
//
// torch 1.13 (aten/src/ATen/native/Distributions.cpp) takes, for num_samples == 1 or without
// replacement (torch's default), the "exponential race": q = empty_like(probs).exponential_(1),
// then argmax(probs / q) along the last dim (topk(probs / q, num_samples) for more than one
// sample), the division in probs' dtype. Generator::exponential draws q exactly as torch's CPU
// kernel does, so the same seed gives the same ids as torch (checked against torch 1.13 in
// tests/ops/test_multinomial.cpp). Sampling with replacement of more than one sample (torch's
// cumulative-sum path) is not offered. Not recorded on the tape: ids have no gradient.
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <tapegrad/graph/random.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/detail/topk_row.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

void multinomial(const Tensor& probs, int64_t num_samples, Generator& generator, Ids& out_ids) {
  const Shape& s = probs.shape();
  if (s.rank() != 1 && s.rank() != 2) {
    throw_unary_error("multinomial", probs, "probs must be [V] or [N, V]");
  }
  const int64_t v = s[s.rank() - 1];
  const int64_t rows = s.rank() == 2 ? s[0] : 1;
  if (v == 0) throw_unary_error("multinomial", probs, "probs has no categories");
  if (num_samples < 1) {
    throw_unary_error("multinomial", probs,
                      "num_samples must be >= 1, got " + std::to_string(num_samples));
  }
  if (num_samples > v) {
    throw_unary_error("multinomial", probs,
                      "cannot draw " + std::to_string(num_samples) + " samples without " +
                          "replacement from " + std::to_string(v) + " categories");
  }
  dispatch(probs.dtype(), [&]<class T>() {
    const T* p = probs.data<T>();
    const int64_t n = rows * v;
    // torch's checks, in its words, before anything is drawn.
    for (int64_t i = 0; i < n; ++i) {
      if (!(p[i] >= T(0) && p[i] < std::numeric_limits<T>::infinity())) {
        throw_unary_error("multinomial", probs,
                          "probability tensor contains either `inf`, `nan` or element < 0");
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      T sum = T(0);
      for (int64_t j = 0; j < v; ++j) sum += p[r * v + j];
      if (sum == T(0)) {
        throw_unary_error("multinomial", probs,
                          "invalid multinomial distribution (sum of probabilities <= 0) in row " +
                              std::to_string(r));
      }
    }
    out_ids.resize(s.rank() == 2 ? Shape{rows, num_samples} : Shape{num_samples});
    int64_t* ids = out_ids.values().data();
    // Scratch from the tape's arena (given back at its next reset).
    T* q = probs.tape().arena().allocate_array<T>(n);
    generator.exponential(q, n, 1.0);
    for (int64_t i = 0; i < n; ++i) q[i] = p[i] / q[i];
    std::vector<std::pair<double, int64_t>> queue;
    if (num_samples > 1) queue.resize(static_cast<size_t>(v));
    for (int64_t r = 0; r < rows; ++r) {
      const T* ratio = q + r * v;
      int64_t* out = ids + r * num_samples;
      if (num_samples == 1) {
        // argmax: the first maximum (a NaN, from 0 / 0, counts as the largest, as in torch)
        int64_t best = 0;
        for (int64_t j = 1; j < v && !std::isnan(ratio[best]); ++j) {
          if (ratio[j] > ratio[best] || std::isnan(ratio[j])) best = j;
        }
        out[0] = best;
      } else {
        for (int64_t j = 0; j < v; ++j) queue[static_cast<size_t>(j)] = {ratio[j], j};
        topk_sort(queue, num_samples);
        for (int64_t j = 0; j < num_samples; ++j) out[j] = queue[static_cast<size_t>(j)].second;
      }
    }
  });
}

Ids multinomial(const Tensor& probs, int64_t num_samples, Generator& generator) {
  Ids out;
  multinomial(probs, num_samples, generator, out);
  return out;
}

}  // namespace tapegrad
