// Reads torch goldens written one tensor a line, `<name> <rank> <dims...> <float.hex()...>`,
// from tests/goldens/<area>/ (activations, selection, reductions), and compares at float or
// absolute tolerances.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "graph/shape.h"
#include "graph/tape.h"

// An inline namespace of its own, as other golden readers define a GoldenTensor too.
namespace tapegrad::testing {
inline namespace hex_goldens {

struct GoldenTensor {
  Shape shape;
  std::vector<double> values;

  std::vector<int64_t> ints() const {
    std::vector<int64_t> out;
    for (double v : values) out.push_back(static_cast<int64_t>(v));
    return out;
  }
};

class GoldenFile {
 public:
  GoldenFile(const std::string& area, const std::string& file) {
    const std::string path = std::string(TAPEGRAD_GOLDEN_DIR) + "/" + area + "/" + file;
    std::ifstream in(path);
    INFO("golden file " << path);
    REQUIRE(in.good());
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream words(line);
      std::string name, word;
      int rank = 0;
      words >> name >> rank;
      std::vector<int64_t> dims(static_cast<size_t>(rank));
      for (int64_t& d : dims) words >> d;
      GoldenTensor t{Shape(std::span<const int64_t>(dims)), {}};
      // strtod reads float.hex()'s "0x1.8p+1" exactly (iostream's >> does not).
      while (words >> word) t.values.push_back(std::strtod(word.c_str(), nullptr));
      REQUIRE(static_cast<int64_t>(t.values.size()) == t.shape.numel());
      tensors_[name] = std::move(t);
    }
  }

  const GoldenTensor& operator[](const std::string& name) const {
    INFO("golden tensor " << name);
    REQUIRE(tensors_.count(name) == 1);
    return tensors_.at(name);
  }

 private:
  std::map<std::string, GoldenTensor> tensors_;
};

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
    REQUIRE(((std::isnan(want) && std::isnan(actual[i])) || error <= tol));
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

}  // namespace hex_goldens
}  // namespace tapegrad::testing
