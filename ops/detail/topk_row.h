// The k largest of one row, in torch's CPU order (topk and multinomial share it).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <utility>

namespace tapegrad {

// Sorts the k largest (value, index) pairs of `queue` to its front, descending, NaN first (with
// largest = false the k smallest, ascending, NaN last), with the algorithm of torch 1.13's
// topk_impl_loop (aten/src/ATen/native/TopKImpl.h): partial_sort
// when k * 64 <= n, else nth_element and a sort of the first k - 1. Equal values then come out
// in the order libstdc++'s algorithms leave them, as in torch built with the same library (Debian's
// torch 1.13 and tapegrad both with GCC 12.2 here; tests/ops/test_topk.cpp checks ties against
// it). This is torch's CPU choice on ties: not always the lower index first.
template <class Before>
void topk_sort_by(std::span<std::pair<double, int64_t>> queue, int64_t k, Before before) {
  const int64_t n = static_cast<int64_t>(queue.size());
  if (k * 64 <= n) {
    std::partial_sort(queue.begin(), queue.begin() + k, queue.end(), before);
  } else {
    std::nth_element(queue.begin(), queue.begin() + (k - 1), queue.end(), before);
    std::sort(queue.begin(), queue.begin() + (k - 1), before);
  }
}

inline void topk_sort(std::span<std::pair<double, int64_t>> queue, int64_t k, bool largest = true) {
  if (k == 0) return;
  using Entry = std::pair<double, int64_t>;
  if (largest) {
    topk_sort_by(queue, k, [](const Entry& x, const Entry& y) {
      return (std::isnan(x.first) && !std::isnan(y.first)) || x.first > y.first;
    });
  } else {
    topk_sort_by(queue, k, [](const Entry& x, const Entry& y) {
      return (!std::isnan(x.first) && std::isnan(y.first)) || x.first < y.first;
    });
  }
}

}  // namespace tapegrad
