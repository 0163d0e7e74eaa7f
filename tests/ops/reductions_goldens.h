// Reads the PyTorch goldens of tests/goldens/reductions/ (written by make_reductions_goldens.py).
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "graph/shape.h"

// An inline namespace of its own: other golden readers define a GoldenTensor too, and two
// definitions under one name would break the one-definition rule.
namespace tapegrad::testing {
inline namespace reductions_goldens {

struct GoldenTensor {
  Shape shape;
  std::vector<double> values;

  std::vector<int64_t> ints() const {
    std::vector<int64_t> out;
    for (double v : values) out.push_back(static_cast<int64_t>(v));
    return out;
  }
};

// One tensor a line: `<name> <rank> <dims...> <values as float.hex()...>`; '#' starts a comment.
class GoldenFile {
 public:
  explicit GoldenFile(const std::string& file) {
    const std::string path = std::string(TAPEGRAD_GOLDEN_DIR) + "/reductions/" + file;
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

}  // namespace reductions_goldens
}  // namespace tapegrad::testing
