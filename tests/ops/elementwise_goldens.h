// Runs the elementwise ops on torch's float32 goldens (tests/goldens/elementwise) and compares
// the output and the gradients, bit for bit where the golden says `exact`.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "graph/factory.h"
#include "ops/ops.h"

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

inline std::vector<GoldenCase> load_elementwise_goldens(const std::string& op) {
  const std::string path = TAPEGRAD_GOLDEN_DIR "/elementwise/elementwise_goldens.txt";
  std::ifstream in(path);
  INFO("golden file " << path);
  REQUIRE(in.good());
  std::vector<GoldenCase> cases;
  std::string line;
  GoldenCase current;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string head;
    words >> head;
    if (head == "case") {
      std::string param;
      current = GoldenCase{};
      words >> current.name >> current.op >> param;
      current.param = std::strtod(param.c_str(), nullptr);
    } else if (head == "end") {
      if (current.op == op) cases.push_back(current);
    } else {
      GoldenField field;
      int rank = 0;
      words >> field.match >> rank;
      std::vector<int64_t> dims(static_cast<size_t>(rank));
      for (int64_t& d : dims) words >> d;
      field.shape = Shape(std::span<const int64_t>(dims));
      int64_t n = 0;
      words >> n;
      for (int64_t i = 0; i < n; ++i) {
        std::string hex;
        words >> hex;
        const uint32_t bits = static_cast<uint32_t>(std::stoul(hex, nullptr, 16));
        float v;
        std::memcpy(&v, &bits, sizeof v);
        field.values.push_back(v);
      }
      REQUIRE(field.shape.numel() == n);
      current.fields[head] = field;
    }
  }
  return cases;
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
