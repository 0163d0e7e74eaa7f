// The row-by-row walk over the last two dims shared by tril, triu and causal_mask.
#pragma once

#include <algorithm>
#include <cstdint>

#include <tapegrad/graph/shape.h>

namespace tapegrad {

// Calls f(row_offset, split, cols) for every row i of every [rows, cols] matrix in the last two
// dims of `shape` (rank >= 2), where split = clamp(i + shift, 0, cols): columns j < split are
// those with j - i < shift. row_offset is the row's first element in row-major order.
template <class F>
void for_each_triangle_row(const Shape& shape, int64_t shift, F&& f) {
  const int r = shape.rank();
  const int64_t rows = shape[r - 2], cols = shape[r - 1];
  const int64_t matrices = rows * cols == 0 ? 0 : shape.numel() / (rows * cols);
  for (int64_t b = 0; b < matrices; ++b) {
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t split = std::clamp<int64_t>(i + shift, 0, cols);
      f((b * rows + i) * cols, split, cols);
    }
  }
}

}  // namespace tapegrad
