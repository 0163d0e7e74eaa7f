// Test-side reader of tests/goldens/attention/attention_goldens.txt (torch values, exact).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "graph/factory.h"
#include "tests/compare.h"

namespace tapegrad::testing {

struct AttentionGolden {
  DType dtype = DType::Float32;
  Shape shape;
  std::vector<double> values;  // exact: float32 values are representable as double
};

// `name dtype shape v1 ... vn`, values as float.hex(), from a file under tests/goldens/ (`relative`
// relative to it), e.g. attention/attention_goldens.txt written by make_attention_goldens.py.
inline std::map<std::string, AttentionGolden> read_attention_goldens(const std::string& relative) {
  std::map<std::string, AttentionGolden> out;
  const std::string path = std::string(TAPEGRAD_GOLDEN_DIR) + "/" + relative;
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot open " + path);
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string name, dtype, dims, token;
    in >> name >> dtype >> dims;
    AttentionGolden g;
    g.dtype = dtype == "f32" ? DType::Float32 : DType::Float64;
    std::vector<int64_t> shape;
    std::istringstream dim_in(dims);
    while (std::getline(dim_in, token, ',')) shape.push_back(std::stoll(token));
    g.shape = Shape(std::span<const int64_t>(shape));
    while (in >> token) g.values.push_back(std::strtod(token.c_str(), nullptr));
    if (static_cast<int64_t>(g.values.size()) != g.shape.numel()) {
      throw std::runtime_error("bad golden line: " + name);
    }
    out.emplace(name, std::move(g));
  }
  return out;
}

inline const std::map<std::string, AttentionGolden>& attention_goldens() {
  static const std::map<std::string, AttentionGolden> goldens =
      read_attention_goldens("attention/attention_goldens.txt");
  return goldens;
}

inline const AttentionGolden& attention_golden(const std::string& name) {
  const auto it = attention_goldens().find(name);
  if (it == attention_goldens().end()) throw std::runtime_error("no golden named " + name);
  return it->second;
}

// The golden as a tensor on the current tape, in its own dtype.
inline Tensor golden_tensor(const std::string& name, bool requires_grad = false) {
  const AttentionGolden& g = attention_golden(name);
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
