// The attention goldens (tests/goldens/attention/attention_goldens.txt) and exact comparisons.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include "tests/compare.h"
#include "tests/goldens.h"

namespace tapegrad::testing {

// tests/goldens/attention/attention_goldens.txt, written by make_attention_goldens.py.
inline const GoldenTensor& attention_golden(const std::string& name) {
  return golden_file("attention/attention_goldens.txt")[name];
}

// The golden as a tensor on the current tape, in its own dtype.
inline Tensor golden_tensor(const std::string& name, bool requires_grad = false) {
  const GoldenTensor& g = attention_golden(name);
  return from_values(g.shape, g.values, g.dtype, requires_grad);
}

// The bit pattern of each element as stored in its dtype; every NaN maps to one pattern, since
// torch's NaN sign is not part of what it promises (and float.hex() drops it).
inline std::vector<uint64_t> bits_of(std::span<const double> values, DType dtype) {
  std::vector<uint64_t> bits;
  for (double v : values) {
    if (std::isnan(v)) {
      bits.push_back(~uint64_t{0});
    } else if (dtype == DType::Float32) {
      bits.push_back(std::bit_cast<uint32_t>(static_cast<float>(v)));
    } else {
      bits.push_back(std::bit_cast<uint64_t>(v));
    }
  }
  return bits;
}

// The largest |a - b| over finite pairs; infinity when a NaN, an inf or a sign of inf disagrees.
inline double max_abs_diff(std::span<const double> a, std::span<const double> b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return INFINITY;
    } else if (std::isinf(a[i]) || std::isinf(b[i])) {
      if (a[i] != b[i]) return INFINITY;
    } else {
      worst = worse(worst, std::abs(a[i] - b[i]));
    }
  }
  return worst;
}

}  // namespace tapegrad::testing
