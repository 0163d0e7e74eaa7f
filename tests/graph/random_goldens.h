// The random-number goldens (tests/goldens/random/random_goldens.txt, written by
// make_random_goldens.py in the suite's one format), read by the generator's and init's tests.
#pragma once

#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/goldens.h"

namespace tapegrad::testing {

inline const GoldenTensor& random_golden(const std::string& name) {
  return golden_file("random/random_goldens.txt")[name];
}

inline std::vector<float> golden_f32(const std::string& name) {
  const GoldenTensor& g = random_golden(name);
  REQUIRE((g.dtype == DType::Float32 && !g.integer));
  return std::vector<float>(g.values.begin(), g.values.end());  // float32 values: exact
}

inline std::vector<double> golden_f64(const std::string& name) {
  const GoldenTensor& g = random_golden(name);
  REQUIRE((g.dtype == DType::Float64 && !g.integer));
  return g.values;
}

// A u64 record (fan-ins, generator states) or an i64 one (dropout masks).
inline std::vector<uint64_t> golden_ints(const std::string& name) {
  const GoldenTensor& g = random_golden(name);
  REQUIRE(g.integer);
  if (g.values.empty()) return g.u64;
  std::vector<uint64_t> out;
  for (int64_t v : g.ints()) out.push_back(static_cast<uint64_t>(v));
  return out;
}

// Bit patterns, so that -0 vs +0 and NaN payloads count as differences.
inline std::vector<uint32_t> bits_of(const std::vector<float>& v) {
  std::vector<uint32_t> b;
  for (float x : v) b.push_back(std::bit_cast<uint32_t>(x));
  return b;
}
inline std::vector<uint64_t> bits_of(const std::vector<double>& v) {
  std::vector<uint64_t> b;
  for (double x : v) b.push_back(std::bit_cast<uint64_t>(x));
  return b;
}

}  // namespace tapegrad::testing
