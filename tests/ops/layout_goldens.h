// The cases of tests/goldens/layout/layout_goldens.txt (torch's values and gradients, written by
// make_layout_goldens.py), and a check of an op against one of them in float64 and float32.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include "tests/goldens.h"

namespace tapegrad::testing {

// One case of an op: its tensors, named `<op>:<label>:<tensor>` in the file.
struct LayoutCase {
  std::string op;
  std::string label;
  std::map<std::string, const GoldenTensor*> tensors;  // by tensor name

  const GoldenTensor* find(const std::string& name) const {
    const auto it = tensors.find(name);
    return it == tensors.end() ? nullptr : it->second;
  }
  const GoldenTensor& get(const std::string& name) const {
    const GoldenTensor* t = find(name);
    if (t == nullptr) FAIL("golden case " << op << " " << label << " has no tensor " << name);
    return *t;
  }
};

// The cases of `op`; fails the test when the file is missing or has none.
inline std::vector<LayoutCase> layout_golden_cases(const std::string& op) {
  std::vector<LayoutCase> cases;
  for (const auto& [name, tensor] : golden_file("layout/layout_goldens.txt").tensors()) {
    const size_t first = name.find(':'), last = name.rfind(':');
    REQUIRE(first != last);
    if (name.compare(0, first, op) != 0 || first != op.size()) continue;
    const std::string label = name.substr(first + 1, last - first - 1);
    if (cases.empty() || cases.back().label != label) cases.push_back({op, label, {}});
    cases.back().tensors[name.substr(last + 1)] = &tensor;
  }
  REQUIRE(!cases.empty());
  return cases;
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
inline void check_golden_case(const LayoutCase& c, const std::vector<std::string>& inputs,
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

}  // namespace tapegrad::testing
