// Size2: an argument torch takes as one int or a pair (kernel sizes, strides, paddings,
// dilations of the convolution and pooling ops).
#pragma once

#include <cstdint>

namespace tapegrad {

// 3 is 3×3, {2, 1} is 2 rows by 1 column: [H, W].
struct Size2 {
  int64_t h, w;
  Size2(int64_t both) : h(both), w(both) {}  // NOLINT(google-explicit-constructor): torch's _pair
  Size2(int64_t rows, int64_t cols) : h(rows), w(cols) {}
};

}  // namespace tapegrad
