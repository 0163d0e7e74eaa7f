// Runs the elementwise ops on torch's float32 goldens (tests/goldens/elementwise) and compares
// the output and the gradients, bit for bit where the golden says `exact`.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/goldens.h"

namespace tapegrad::testing {

struct GoldenField {
  std::string match;  // exact, ulp or sum (see make_elementwise_goldens.py)
  Shape shape;
  std::vector<float> values;
};

struct GoldenCase {
  std::string name, op;
  double param = 0.0;
  std::map<std::string, GoldenField> fields;
};

// The cases of `op` in tests/goldens/elementwise/elementwise_goldens.txt, whose records are named
// `<case>/<field>@<match>` and `<case>/param`, <case> being `<op>` or `<op>:<variant>`.
inline std::vector<GoldenCase> load_elementwise_goldens(const std::string& op) {
  std::map<std::string, GoldenCase> cases;
  for (const auto& [name, tensor] : golden_file("elementwise/elementwise_goldens.txt").tensors()) {
    const size_t slash = name.rfind('/');  // a case name may hold a / (div's)
    REQUIRE(slash != std::string::npos);
    const std::string case_name = name.substr(0, slash);
    if (case_name.substr(0, case_name.find(':')) != op) continue;
    GoldenCase& c = cases[case_name];
    c.name = case_name;
    c.op = op;
    const std::string rest = name.substr(slash + 1);
    if (rest == "param") {
      REQUIRE(tensor.values.size() == 1);
      c.param = tensor.values[0];
      continue;
    }
    const size_t at = rest.find('@');
    REQUIRE(at != std::string::npos);
    REQUIRE(tensor.dtype == DType::Float32);
    GoldenField field;
    field.match = rest.substr(at + 1);
    field.shape = tensor.shape;
    field.values.assign(tensor.values.begin(), tensor.values.end());  // exact: float32 values
    c.fields[rest.substr(0, at)] = std::move(field);
  }
  std::vector<GoldenCase> out;
  for (auto& [name, c] : cases) out.push_back(std::move(c));
  return out;
}

// Counts elements of `actual` (float32 values widened to double) outside the golden's match.
inline int64_t golden_mismatches(const GoldenField& golden, const std::vector<double>& actual) {
  REQUIRE(actual.size() == golden.values.size());
  double scale = 0.0;
  for (float r : golden.values) scale = std::max(scale, static_cast<double>(std::abs(r)));
  int64_t bad = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const float x = static_cast<float>(actual[i]), r = golden.values[i];
    const double ulp = static_cast<double>(std::nextafter(std::abs(r), INFINITY) - std::abs(r));
    const double error = std::abs(static_cast<double>(x) - static_cast<double>(r));
    bool ok = false;
    if (golden.match == "exact") {
      ok = std::memcmp(&x, &r, sizeof x) == 0;
    } else if (golden.match == "ulp") {
      ok = error <= 4 * ulp;
    } else {
      ok = error <= 4 * ulp + 1e-6 * scale;
    }
    if (!ok) {
      if (bad == 0) {
        UNSCOPED_INFO("first mismatch at " << i << ": " << x << " vs torch " << r << " ("
                                           << golden.match << ")");
      }
      ++bad;
    }
  }
  return bad;
}

// Runs every golden case of `op` (an op name, or div_scalar) forward and backward.
template <class F>
void check_elementwise_goldens(const std::string& op, F apply) {
  const std::vector<GoldenCase> cases = load_elementwise_goldens(op);
  REQUIRE(!cases.empty());
  for (const GoldenCase& c : cases) {
    INFO("golden case " << c.name);
    Tape tape;
    TapeScope scope(tape);
    const GoldenField& fa = c.fields.at("a");
    Tensor a = from_data(fa.shape, fa.values, true);
    Tensor b;
    if (c.fields.count("b") != 0) {
      const GoldenField& fb = c.fields.at("b");
      b = from_data(fb.shape, fb.values, true);
    }
    Tensor y = apply(a, b, c.param);
    REQUIRE(y.shape() == c.fields.at("y").shape);
    CHECK(golden_mismatches(c.fields.at("y"), y.values()) == 0);
    const std::vector<float>& dy = c.fields.at("dy").values;
    tape.backward(y, std::vector<double>(dy.begin(), dy.end()));
    CHECK(golden_mismatches(c.fields.at("da"), a.grad_values()) == 0);
    if (b.defined()) CHECK(golden_mismatches(c.fields.at("db"), b.grad_values()) == 0);
  }
}

}  // namespace tapegrad::testing
