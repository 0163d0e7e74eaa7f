// Reads the PyTorch goldens of tests/goldens/chapter3/ and compares tapegrad's values with them.
// (Its own namespace: the other golden readers of the suite define GoldenFile etc. too.)
// The file format is described in tests/goldens/chapter3/make_chapter3_goldens.py.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "graph/parameter.h"
#include "graph/tape.h"

namespace tapegrad::testing::chapter3 {

struct GoldenRecord {
  std::string name;
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  std::vector<double> values;
  bool shown = false;  // the example program prints it
  std::string str;     // torch's print, without the autograd suffixes
};

class GoldenFile {
 public:
  explicit GoldenFile(const std::string& filename)
      : path_(std::string(TAPEGRAD_GOLDEN_DIR) + "/chapter3/" + filename) {
    std::ifstream in(path_);
    if (!in) throw std::runtime_error("cannot open golden file " + path_);
    std::string line;
    GoldenRecord* current = nullptr;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream words(line);
      std::string key;
      words >> key;
      if (key == "@") {
        records_.emplace_back();
        current = &records_.back();
        current->name = line.substr(2);
        continue;
      }
      if (current == nullptr) throw std::runtime_error(path_ + ": data before the first record");
      if (key == "dtype") {
        std::string d;
        words >> d;
        current->dtype = d == "float64" ? DType::Float64 : DType::Float32;
      } else if (key == "shape") {
        int64_t d;
        while (words >> d) current->shape.push_back(d);
      } else if (key == "values") {
        std::string v;
        while (words >> v) current->values.push_back(std::strtod(v.c_str(), nullptr));
      } else if (key == "shown") {
        int s = 0;
        words >> s;
        current->shown = s != 0;
      } else if (key == "str") {
        int n = 0;
        words >> n;
        for (int i = 0; i < n; ++i) {
          std::getline(in, line);
          current->str += (i ? "\n" : "") + line;
        }
      } else {
        throw std::runtime_error(path_ + ": unexpected line: " + line);
      }
    }
    for (size_t i = 0; i < records_.size(); ++i) index_[records_[i].name] = i;
  }

  const GoldenRecord& operator[](const std::string& name) const {
    auto it = index_.find(name);
    if (it == index_.end()) throw std::runtime_error(path_ + " has no record \"" + name + "\"");
    return records_[it->second];
  }
  bool contains(const std::string& name) const { return index_.count(name) != 0; }
  const std::vector<GoldenRecord>& records() const { return records_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<GoldenRecord> records_;
  std::map<std::string, size_t> index_;
};

// Loaded once per file for the whole test run.
inline const GoldenFile& goldens(const std::string& filename) {
  static std::map<std::string, std::unique_ptr<GoldenFile>> cache;
  auto& slot = cache[filename];
  if (!slot) slot = std::make_unique<GoldenFile>(filename);
  return *slot;
}

struct Comparison {
  bool ok = true;
  std::string message;
};

inline std::string shape_str(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

inline std::string hex(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%a", v);
  return buffer;
}

// Values within atol + rtol·|expected| (infinities must be equal); rtol = atol = 0 is bit-exact.
inline Comparison compare_values(const std::string& what, const std::vector<int64_t>& shape,
                                 DType dtype, const std::vector<double>& actual,
                                 const GoldenRecord& expected, double atol, double rtol) {
  Comparison c;
  if (shape != expected.shape || dtype != expected.dtype) {
    c.ok = false;
    c.message = what + ": " + dtype_name(dtype) + " " + shape_str(shape) + ", golden \"" +
                expected.name + "\" is " + dtype_name(expected.dtype) + " " +
                shape_str(expected.shape);
    return c;
  }
  double worst = 0.0;
  size_t worst_i = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected.values[i];
    double excess;
    if (std::isinf(e) || std::isinf(a)) {
      excess = a == e ? 0.0 : INFINITY;
    } else if (std::isnan(a)) {
      excess = INFINITY;
    } else {
      excess = std::fabs(a - e) - (atol + rtol * std::fabs(e));
    }
    if (excess > 0.0 && (c.ok || excess > worst)) {
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

inline std::vector<int64_t> dims_of(const Shape& s) {
  return std::vector<int64_t>(s.dims().begin(), s.dims().end());
}

// Values within the chapter's tolerance: 1e-6 absolute + 1e-5 relative.
inline void check_close(const Tensor& t, const GoldenRecord& expected, double atol = 1e-6,
                        double rtol = 1e-5) {
  const Comparison c = compare_values("\"" + expected.name + "\"", dims_of(t.shape()), t.dtype(),
                                      t.values(), expected, atol, rtol);
  INFO(c.message);
  CHECK(c.ok);
}

inline void check_exact(const Tensor& t, const GoldenRecord& expected) {
  check_close(t, expected, 0.0, 0.0);
}

inline void check_close(const Parameter& p, const GoldenRecord& expected, double atol = 1e-6,
                        double rtol = 1e-5) {
  const Comparison c = compare_values("parameter \"" + p.name() + "\"", dims_of(p.shape()),
                                      p.dtype(), p.values(), expected, atol, rtol);
  INFO(c.message);
  CHECK(c.ok);
}

// Bit for bit: initial weights drawn from the generator.
inline void check_exact(const Parameter& p, const GoldenRecord& expected) {
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

inline std::string example_binary(const std::string& name) {
  return std::string(TAPEGRAD_BINARY_DIR) + "/examples/" + name;
}

}  // namespace tapegrad::testing::chapter3
