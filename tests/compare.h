// NaN-aware error maxima for the tests: a NaN (or a size mismatch) is the worst error there is,
// so a run that produces NaN can never pass a tolerance check (std::max(worst, NaN) keeps worst).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <tapegrad/graph/parameter.h>

namespace tapegrad::testing {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A parameter's stored bytes, for bit-for-bit comparisons.
inline std::vector<uint8_t> parameter_bits(const Parameter& p) {
  const auto* b = static_cast<const uint8_t*>(p.raw_data());
  return {b, b + p.numel() * dtype_size(p.dtype())};
}

// The larger of a running maximum and a new error, where NaN beats everything and sticks.
inline double worse(double worst, double error) {
  if (std::isnan(worst) || std::isnan(error)) return NAN;
  return error > worst ? error : worst;
}

// |actual - expected| / max(|expected|, floor): relative error, judged by `floor` near zero.
inline double relative_error(double actual, double expected, double floor = 1e-3) {
  return std::abs(actual - expected) / std::max(std::abs(expected), floor);
}

// A running maximum of errors; within(tol) is false once any error was NaN or above tol.
struct MaxError {
  double value = 0.0;
  void add(double error) { value = worse(value, error); }
  bool within(double tolerance) const { return value <= tolerance; }  // false for NaN
};

// Largest |a[i] - b[i]|; INFINITY when the sizes differ, NaN when any difference is NaN.
inline double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = worse(worst, std::abs(a[i] - b[i]));
  return worst;
}

// Largest relative_error(a[i], b[i], floor), with the same NaN and size rules.
inline double max_relative_error(const std::vector<double>& actual,
                                 const std::vector<double>& expected, double floor = 1e-3) {
  if (actual.size() != expected.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    worst = worse(worst, relative_error(actual[i], expected[i], floor));
  }
  return worst;
}

}  // namespace tapegrad::testing
