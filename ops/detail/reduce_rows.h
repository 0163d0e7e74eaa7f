// Reducing contiguous rows (a reduction whose reduced dims are the last ones): the sums, the
// extreme index and the test for that layout, written so the compiler keeps the running values
// in vector registers instead of a chain through memory.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <tapegrad/graph/tape.h>

namespace tapegrad {

// Whether the dims in `mask` are the last ones of `s` (at least one): each output element then
// reduces one contiguous row of x.
inline bool reduces_last_dims(const Shape& s, uint32_t mask) {
  const int rank = s.rank();
  if (rank == 0 || mask == 0) return false;
  const uint32_t all = rank >= 32 ? ~0u : (1u << rank) - 1u;
  if ((mask & ~all) != 0) return false;
  const uint32_t kept = ~mask & all;
  return (kept & (kept + 1u)) == 0;  // the kept dims are a prefix
}

// Σ f(row[k]) in double. float32: eight running sums a vector wide (lane j takes k ≡ j mod 8),
// added in lane order, then the tail (sum_along's order); float64: in order, one running sum.
template <class T, class F>
double row_sum_of(const T* row, int64_t n, F f) {
  if constexpr (std::is_same_v<T, float>) {
    double lane[8] = {};
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
      for (int j = 0; j < 8; ++j) lane[j] += f(static_cast<double>(row[k + j]));
    }
    double total = 0.0;
    for (double l : lane) total += l;
    for (; k < n; ++k) total += f(static_cast<double>(row[k]));
    return total;
  } else {
    double total = 0.0;
    for (int64_t k = 0; k < n; ++k) total += f(static_cast<double>(row[k]));
    return total;
  }
}

template <class T>
double row_sum(const T* row, int64_t n) {
  return row_sum_of(row, n, [](double v) { return v; });
}

// The index of the first largest (Max) or smallest element of row[0, n), n >= 1, or of the first
// NaN when there is one: what a scan in order that replaces its pick only on a strictly better
// element or a NaN returns (torch's argmax / max(dim) rule). The extreme value is found eight
// lanes wide first; a row holding a NaN or an infinity (seen as x·0 turning NaN) is scanned in
// order instead.
template <bool Max, class T>
int64_t row_extreme_index(const T* row, int64_t n) {
  const auto better = [](T a, T b) { return Max ? a > b : a < b; };
  const auto scan = [&] {
    int64_t best = 0;
    for (int64_t k = 1; k < n && !std::isnan(row[best]); ++k) {
      if (better(row[k], row[best]) || std::isnan(row[k])) best = k;
    }
    return best;
  };
  if (n < 16) return scan();
  T lane[8] = {}, zero[8] = {};
  for (int j = 0; j < 8; ++j) {
    lane[j] = row[j];
    zero[j] = row[j] * T(0);
  }
  int64_t k = 8;
  for (; k + 8 <= n; k += 8) {
    for (int j = 0; j < 8; ++j) {
      const T v = row[k + j];
      lane[j] = better(v, lane[j]) ? v : lane[j];
      zero[j] += v * T(0);
    }
  }
  T m = lane[0], z = zero[0];
  for (int j = 1; j < 8; ++j) {
    m = better(lane[j], m) ? lane[j] : m;
    z += zero[j];
  }
  for (; k < n; ++k) {
    m = better(row[k], m) ? row[k] : m;
    z += row[k] * T(0);
  }
  if (z != z) return scan();  // a NaN or an infinity somewhere (z is 0 otherwise)
  int64_t i = 0;
  while (row[i] != m) ++i;  // every element before the first maximum is smaller
  return i;
}

}  // namespace tapegrad
