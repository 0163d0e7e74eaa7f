// Reads tests/goldens/layout/layout_goldens.txt (torch's values and gradients, written by
// make_layout_goldens.py) and checks an op against one of its cases in float64 and float32.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "graph/factory.h"

// An inline namespace of its own: other golden readers define a GoldenTensor too, and two
// definitions under one name would break the one-definition rule.
namespace tapegrad::testing {
inline namespace layout_goldens {

struct GoldenTensor {
  std::string name;
  Shape shape;
  std::vector<double> values;
};

struct GoldenCase {
  std::string op;
  std::string label;
  std::vector<GoldenTensor> tensors;

  const GoldenTensor* find(const std::string& name) const {
    for (const GoldenTensor& t : tensors) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }
  const GoldenTensor& get(const std::string& name) const {
    const GoldenTensor* t = find(name);
    if (t == nullptr) FAIL("golden case " << op << " " << label << " has no tensor " << name);
    return *t;
  }
};

// The cases of `op`, in file order; fails the test when the file is missing or has none.
inline std::vector<GoldenCase> layout_golden_cases(const std::string& op) {
  const std::string path = TAPEGRAD_GOLDEN_DIR "/layout/layout_goldens.txt";
  std::ifstream file(path);
  REQUIRE(file.good());
  std::vector<GoldenCase> cases;
  GoldenCase* current = nullptr;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string word;
    in >> word;
    if (word == "case") {
      GoldenCase c;
      in >> c.op >> c.label;
      cases.push_back(c);
      current = &cases.back();
    } else if (word == "end") {
      current = nullptr;
    } else {
      REQUIRE(current != nullptr);
      GoldenTensor t;
      t.name = word;
      int rank = 0;
      in >> rank;
      std::vector<int64_t> dims(static_cast<size_t>(rank));
      for (int64_t& d : dims) in >> d;
      t.shape = Shape(std::span<const int64_t>(dims));
      std::string v;
      while (in >> v) t.values.push_back(std::strtod(v.c_str(), nullptr));
      REQUIRE(static_cast<int64_t>(t.values.size()) == t.shape.numel());
      current->tensors.push_back(std::move(t));
    }
  }
  std::vector<GoldenCase> selected;
  for (GoldenCase& c : cases) {
    if (c.op == op) selected.push_back(std::move(c));
  }
  REQUIRE(!selected.empty());
  return selected;
}

inline void check_close(const std::vector<double>& actual, const GoldenTensor& expected,
                        double tolerance) {
  REQUIRE(actual.size() == expected.values.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO(expected.name << "[" << i << "]");
    CHECK(std::abs(actual[i] - expected.values[i]) <=
          tolerance * (1.0 + std::abs(expected.values[i])));
  }
}

// Builds the case's named inputs as leaves of `dtype` that require grad, runs f, and checks
// the output and, after backward with the case's dy, each input's gradient.
inline void check_golden_case(const GoldenCase& c, const std::vector<std::string>& inputs,
                              const std::function<Tensor(std::span<const Tensor>)>& f,
                              DType dtype) {
  INFO("golden case " << c.op << " " << c.label << " in " << dtype_name(dtype));
  const double tolerance = dtype == DType::Float64 ? 1e-12 : 2e-6;
  Tape tape;
  TapeScope scope(tape);
  std::vector<Tensor> leaves;
  for (const std::string& name : inputs) {
    const GoldenTensor& t = c.get(name);
    leaves.push_back(from_values(t.shape, t.values, dtype, true));
  }
  Tensor y = f(leaves);
  const GoldenTensor& expected = c.get("y");
  REQUIRE(y.shape() == expected.shape);
  REQUIRE(y.dtype() == dtype);
  check_close(y.values(), expected, tolerance);
  tape.backward(y, c.get("dy").values);
  for (size_t k = 0; k < inputs.size(); ++k) {
    check_close(leaves[k].grad_values(), c.get("d" + inputs[k]), tolerance);
  }
}

}  // namespace layout_goldens
}  // namespace tapegrad::testing
