// The torch golden checks shared by the reductions of issue #35 (amax, amin, max and min of all
// elements, min along a dim, argmin, sum and mean over dims, var, std, logsumexp, prod, norm):
// tests/goldens/reductions2/reductions2.txt, float32 and float64.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/gradcheck.h>
#include <tapegrad/ops/ops.h>
#include "tests/goldens.h"
#include "tests/ops/elementwise2_goldens.h"

namespace tapegrad::testing {

inline const GoldenFile& reductions2_goldens() {
  static const GoldenFile golden("reductions2", "reductions2.txt");
  return golden;
}

// Tolerances, in units of the dtype's epsilon relative to |torch|: exact for the selections
// (amax, max, min along a dim: a value and dY / count), a few units where the order of a sum or
// product differs from torch's (tapegrad sums in double, torch in its vector lanes).
struct GoldenUlps {
  double y = 0;
  double dx = 0;
};

// y = f(x), and dx for torch's dy, both dtypes, against `case_name`'s goldens ("amax_dim1"):
// shapes, values (nan where torch has nan, ±inf equal) and, for a non-empty output, dx.
inline void check_reduction_goldens(const std::string& case_name,
                                    const std::function<Tensor(const Tensor&)>& f,
                                    GoldenUlps ulps = {}) {
  const GoldenFile& golden = reductions2_goldens();
  for (const auto& [tag, dtype] : golden_dtypes()) {
    const std::string name = case_name + "." + tag;
    INFO(name);
    Tape tape;
    TapeScope scope(tape);
    const GoldenTensor& gx = golden[name + ".x"];
    const GoldenTensor& gy = golden[name + ".y"];
    Tensor x = from_values(gx.shape, gx.values, dtype, true);
    Tensor y = f(x);
    CHECK(y.shape() == gy.shape);
    CHECK(y.dtype() == dtype);
    require_golden(y.values(), gy, dtype, ulps.y, false, name + ".y");
    if (y.numel() == 0) continue;  // nothing flows back from an empty output
    tape.backward(y, golden[name + ".dy"].values);
    require_golden(x.grad_values(), golden[name + ".dx"], dtype, ulps.dx, false, name + ".dx");
  }
}

// A random permutation of 0.1, 0.2, ... of `shape`: no ties, gaps far wider than gradcheck's step
// (for the ops whose gradient picks elements: amax, amin, max, min, norm with p = inf).
inline GradcheckInput distinct_reduction_input(const Shape& shape, uint64_t seed) {
  GradcheckInput in = random_input(shape, seed);
  std::vector<size_t> order(in.values.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return in.values[a] < in.values[b]; });
  for (size_t r = 0; r < order.size(); ++r) in.values[order[r]] = 0.1 * static_cast<double>(r + 1);
  return in;
}

struct DimsCase {
  Shape shape;
  std::vector<int> dims;
  bool keepdim;
};

// Ranks 0 to 4; the empty list (every dim), one dim from the front and from the back, two dims,
// keepdim both ways: what the reductions over a list of dims are gradient-checked on.
inline std::vector<DimsCase> dims_reduction_cases() {
  std::vector<DimsCase> cases;
  for (const Shape& shape : {Shape{}, Shape{5}, Shape{3, 4}, Shape{2, 3, 4}, Shape{2, 1, 3, 2}}) {
    std::vector<std::vector<int>> lists{{}, {0}, {-1}};
    if (shape.rank() >= 2) lists.push_back({0, -1});
    if (shape.rank() >= 3) lists.push_back({2, 1});
    for (const auto& dims : lists) {
      for (bool keepdim : {false, true}) cases.push_back({shape, dims, keepdim});
    }
  }
  return cases;
}

inline std::string dims_case_text(const DimsCase& c) {
  std::string text = "shape " + c.shape.str() + " dims (";
  for (const int d : c.dims) text += std::to_string(d) + " ";
  return text + ")" + (c.keepdim ? " keepdim" : "");
}

}  // namespace tapegrad::testing
