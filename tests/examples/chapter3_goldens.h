// Compares tapegrad's values with the PyTorch goldens of tests/goldens/chapter3/ (written by
// make_chapter3_goldens.py in the suite's one format, read through tests/goldens.h), and runs
// the example programs.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/tape.h>
#include "tests/goldens.h"

namespace tapegrad::testing::chapter3 {

// The golden file tests/goldens/chapter3/<filename>, read once for the whole test run.
inline const GoldenFile& goldens(const std::string& filename) {
  return golden_file("chapter3/" + filename);
}

struct Comparison {
  bool ok = true;
  std::string message;
};

inline std::string hex(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%a", v);
  return buffer;
}

// Values within atol + rtol·|expected| (infinities must be equal; a NaN on either side fails);
// rtol = atol = 0 is bit-exact.
inline Comparison compare_values(const std::string& what, const Shape& shape, DType dtype,
                                 const std::vector<double>& actual, const GoldenTensor& expected,
                                 double atol, double rtol) {
  Comparison c;
  if (shape != expected.shape || dtype != expected.dtype || expected.is_text) {
    c.ok = false;
    const std::string golden =
        expected.is_text ? "text"
                         : std::string(dtype_name(expected.dtype)) + " " + expected.shape.str();
    c.message = what + ": " + dtype_name(dtype) + " " + shape.str() + ", golden \"" +
                expected.name + "\" is " + golden;
    return c;
  }
  double worst = 0.0;
  size_t worst_i = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected.values[i];
    double excess;
    if (std::isnan(a) || std::isnan(e)) {
      excess = INFINITY;
    } else if (std::isinf(e) || std::isinf(a)) {
      excess = a == e ? 0.0 : INFINITY;
    } else {
      excess = std::fabs(a - e) - (atol + rtol * std::fabs(e));
    }
    if (excess > 0.0 && (c.ok || excess > worst)) {  // never NaN: see above
      c.ok = false;
      worst = excess;
      worst_i = i;
    }
  }
  if (!c.ok) {
    std::ostringstream m;
    m.precision(17);
    m << what << " vs golden \"" << expected.name << "\": element " << worst_i << " is "
      << actual[worst_i] << " (" << hex(actual[worst_i]) << "), PyTorch's is "
      << expected.values[worst_i] << " (" << hex(expected.values[worst_i]) << "); tolerance "
      << atol << " + " << rtol << "·|expected|";
    c.message = m.str();
  }
  return c;
}

// Values within the chapter's tolerance: 1e-6 absolute + 1e-5 relative.
inline void check_close(const Tensor& t, const GoldenTensor& expected, double atol = 1e-6,
                        double rtol = 1e-5) {
  const Comparison c = compare_values("\"" + expected.name + "\"", t.shape(), t.dtype(), t.values(),
                                      expected, atol, rtol);
  INFO(c.message);
  CHECK(c.ok);
}

inline void check_exact(const Tensor& t, const GoldenTensor& expected) {
  check_close(t, expected, 0.0, 0.0);
}

inline void check_close(const Parameter& p, const GoldenTensor& expected, double atol = 1e-6,
                        double rtol = 1e-5) {
  const Comparison c = compare_values("parameter \"" + p.name() + "\"", p.shape(), p.dtype(),
                                      p.values(), expected, atol, rtol);
  INFO(c.message);
  CHECK(c.ok);
}

// Bit for bit: initial weights drawn from the generator.
inline void check_exact(const Parameter& p, const GoldenTensor& expected) {
  check_close(p, expected, 0.0, 0.0);
}

// Runs a program and returns what it printed on stdout (and its exit status).
inline std::string run_program(const std::string& command, int* status) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  *status = pclose(pipe);
  return out;
}

// A book chapter program (examples/) or an installed program (apps/), in the build tree.
inline std::string example_binary(const std::string& name) {
  return std::string(TAPEGRAD_BINARY_DIR) + "/examples/" + name;
}
inline std::string app_binary(const std::string& name) {
  return std::string(TAPEGRAD_BINARY_DIR) + "/bin/" + name;
}

}  // namespace tapegrad::testing::chapter3
