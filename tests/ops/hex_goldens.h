// Compares with torch goldens (tests/goldens.h's GoldenFile: activations, selection, reductions)
// at float or absolute tolerances.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <tapegrad/graph/tape.h>
#include "tests/goldens.h"

namespace tapegrad::testing {

// Requires every element within `ulps` units of the dtype's epsilon of torch's value, relative to
// max(|torch|, `floor`) (the floor covers results that cancel to near zero). Returns how many
// elements are bit-for-bit equal, for the test to report or require.
inline int64_t require_near(const std::vector<double>& actual, const GoldenTensor& expected,
                            DType dtype, double ulps, const std::string& what, double floor = 1.0) {
  INFO(what);
  REQUIRE(actual.size() == expected.values.size());
  const double eps = dtype == DType::Float32 ? std::numeric_limits<float>::epsilon()
                                             : std::numeric_limits<double>::epsilon();
  int64_t equal = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double want = expected.values[i];
    const double error = std::abs(actual[i] - want);
    const double tol = ulps * eps * std::max(std::abs(want), floor);
    INFO("element " << i << ": " << actual[i] << " vs torch " << want << ", error " << error
                    << " > " << tol);
    // Equal infinities (a gradient at a clamp) count as equal: their difference is NaN.
    REQUIRE((actual[i] == want || (std::isnan(want) && std::isnan(actual[i])) || error <= tol));
    if (actual[i] == want || (std::isnan(want) && std::isnan(actual[i]))) ++equal;
  }
  return equal;
}

// Every element within `tol` (absolute, on values of order one) of the golden.
inline void require_close(const std::vector<double>& actual, const GoldenTensor& expected,
                          double tol, const std::string& what) {
  INFO(what);
  REQUIRE(actual.size() == expected.values.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    const double error = std::abs(actual[i] - expected.values[i]);
    INFO("element " << i << ": " << actual[i] << " vs torch " << expected.values[i] << ", error "
                    << error << " > " << tol);
    REQUIRE(error <= tol);
  }
}

}  // namespace tapegrad::testing
