// The one n-d walk the kernels share: every row of a row-major output of any rank up to
// kMaxRank, with each operand's offset advanced by its own strides.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include <tapegrad/graph/shape.h>

namespace tapegrad {

// Per-dim element strides padded to kMaxRank dims, the real dims on the right (0 along a dim an
// operand is broadcast along).
using Strides = std::array<int64_t, kMaxRank>;

// `shape` padded on the left with 1s to kMaxRank dims: the loop bounds for Strides.
inline std::array<int64_t, kMaxRank> padded_dims(const Shape& shape) {
  std::array<int64_t, kMaxRank> dims;
  dims.fill(1);
  const int offset = kMaxRank - shape.rank();
  for (int d = 0; d < shape.rank(); ++d) dims[static_cast<size_t>(offset + d)] = shape[d];
  return dims;
}

// Calls row(o, base) for every run of the last dim of the padded `dims`, in row-major order: o
// is the run's first output element, base[k] operand k's offset there (the run's elements
// follow at strides[k][kMaxRank - 1]). The two dims before the last are plain loops and the
// leading dims move an odometer once per block of the last three, so the walk costs what four
// nested loops cost while reaching rank kMaxRank.
template <size_t N, class Row>
void for_each_strided_row(const std::array<int64_t, kMaxRank>& dims,
                          const std::array<const Strides*, N>& strides, Row&& row) {
  constexpr int kOuter = kMaxRank - 3;  // the dims the odometer walks
  constexpr auto d1 = static_cast<size_t>(kMaxRank - 3), d2 = static_cast<size_t>(kMaxRank - 2),
                 d3 = static_cast<size_t>(kMaxRank - 1);
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  std::array<int64_t, kOuter> index{};
  std::array<int64_t, N> outer{};  // each operand's offset at the odometer's position
  std::array<int64_t, N> base{};
  int64_t o = 0;
  while (true) {
    for (int64_t i1 = 0; i1 < dims[d1]; ++i1) {
      for (int64_t i2 = 0; i2 < dims[d2]; ++i2, o += dims[d3]) {
        for (size_t k = 0; k < N; ++k)
          base[k] = outer[k] + i1 * (*strides[k])[d1] + i2 * (*strides[k])[d2];
        row(o, static_cast<const std::array<int64_t, N>&>(base));
      }
    }
    int d = kOuter - 1;
    for (; d >= 0; --d) {
      const auto u = static_cast<size_t>(d);
      for (size_t k = 0; k < N; ++k) outer[k] += (*strides[k])[u];
      if (++index[u] < dims[u]) break;
      for (size_t k = 0; k < N; ++k) outer[k] -= index[u] * (*strides[k])[u];
      index[u] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace tapegrad
