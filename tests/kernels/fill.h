// A fixed, irregular fill in [-1, 1) for the kernel tests: the same values on every machine.
#pragma once

#include <cstddef>
#include <vector>

namespace tapegrad::testing {

// n values in [-1, 1), times `scale`, from a linear congruential sequence started at `seed`.
inline std::vector<float> irregular_fill(size_t n, unsigned seed, float scale = 1.0f) {
  std::vector<float> v(n);
  unsigned s = seed;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = scale * (static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.0f);
  }
  return v;
}

}  // namespace tapegrad::testing
