// The torch golden checks shared by the elementwise ops of issue #35 (abs, sign, clamp, maximum,
// minimum, sin, cos, rsqrt, exp2, log2, log10, floor, ceil, round, square, the comparisons and
// isnan/isinf/isfinite: tests/goldens/elementwise2/elementwise2.txt; tan to erfc, trunc and frac:
// math.txt beside it), float32 and float64.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/gradcheck.h>
#include <tapegrad/ops/ops.h>
#include "tests/goldens.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

namespace tapegrad::testing {

// sin, cos, exp2, log2 and log10 call the C library here and SLEEF's 1-ulp functions in torch: the
// forward may differ from torch's by an ulp, a gradient (a product with another such value) by
// two. The other ops are compared bit for bit.
inline constexpr double kLibmUlps = 2.0;
// expm1's gradient dY ⊙ (Y + 1) and atanh's dY / (1 − X²) cancel: the forward's last-bit
// difference (expm1) or a fused multiply-add where torch rounds twice (atanh) grows by
// |Y| / |Y + 1| and 1 / (1 − X²), about 11 and 5 at the golden inputs that need it most.
inline constexpr double kCancellingUlps = 16.0;
inline constexpr double kLn2 = 0.6931471805599453;
inline constexpr double kLn10 = 2.3025850929940456;

inline const GoldenFile& elementwise2_goldens() {
  static const GoldenFile golden("elementwise2", "elementwise2.txt");
  return golden;
}

inline const GoldenFile& math_goldens() {
  static const GoldenFile golden("elementwise2", "math.txt");
  return golden;
}

// Requires every element of `actual` to match torch's: nan where torch has nan, ±inf equal, and
// finite values within `ulps` units of the dtype's epsilon relative to |torch| (0: bit for bit).
// With `zero_sign`, a zero's sign must match too (outputs; a gradient is 0 + its terms, whose
// zero may be +0 where torch's is −0). Returns how many elements are bit-for-bit equal.
inline int64_t require_golden(const std::vector<double>& actual, const GoldenTensor& expected,
                              DType dtype, double ulps, bool zero_sign, const std::string& what) {
  INFO(what);
  REQUIRE(actual.size() == expected.values.size());
  const double eps = dtype == DType::Float32 ? std::numeric_limits<float>::epsilon()
                                             : std::numeric_limits<double>::epsilon();
  int64_t equal = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double want = expected.values[i], got = actual[i];
    INFO("element " << i << ": " << got << " vs torch " << want);
    if (std::isnan(want)) {
      REQUIRE(std::isnan(got));
      ++equal;
      continue;
    }
    if (std::isinf(want) || ulps == 0.0) {
      REQUIRE(got == want);
    } else {
      REQUIRE(std::abs(got - want) <= ulps * eps * std::abs(want));
    }
    if (zero_sign && want == 0.0) REQUIRE(std::signbit(got) == std::signbit(want));
    if (got == want) ++equal;
  }
  return equal;
}

inline const std::vector<std::pair<std::string, DType>>& golden_dtypes() {
  static const std::vector<std::pair<std::string, DType>> tags{{"f32", DType::Float32},
                                                               {"f64", DType::Float64}};
  return tags;
}

// y = f(x) and dx for dy, both dtypes, against `case_name`'s goldens (e.g. "clamp_min"). `ulps`:
// 0 for bit for bit. Returns the number of bit-equal elements (y and dx, both dtypes).
inline int64_t check_unary_goldens(const std::string& case_name,
                                   const std::function<Tensor(const Tensor&)>& f, double ulps,
                                   const GoldenFile& golden = elementwise2_goldens()) {
  int64_t equal = 0;
  for (const auto& [tag, dtype] : golden_dtypes()) {
    const std::string name = case_name + "." + tag;
    Tape tape;
    TapeScope scope(tape);
    const GoldenTensor& gx = golden[name + ".x"];
    Tensor x = from_values(gx.shape, gx.values, dtype, true);
    Tensor y = f(x);
    tape.backward(y, golden[name + ".dy"].values);
    equal += require_golden(y.values(), golden[name + ".y"], dtype, ulps, true, name + ".y");
    equal +=
        require_golden(x.grad_values(), golden[name + ".dx"], dtype, ulps, false, name + ".dx");
  }
  return equal;
}

// The same for a binary op with gradients for both operands (maximum, minimum: exact).
inline void check_binary_goldens(const std::string& case_name,
                                 const std::function<Tensor(const Tensor&, const Tensor&)>& f,
                                 double ulps = 0,
                                 const GoldenFile& golden = elementwise2_goldens()) {
  for (const auto& [tag, dtype] : golden_dtypes()) {
    const std::string name = case_name + "." + tag;
    Tape tape;
    TapeScope scope(tape);
    const GoldenTensor& ga = golden[name + ".a"];
    const GoldenTensor& gb = golden[name + ".b"];
    Tensor a = from_values(ga.shape, ga.values, dtype, true);
    Tensor b = from_values(gb.shape, gb.values, dtype, true);
    Tensor y = f(a, b);
    tape.backward(y, golden[name + ".dy"].values);
    // The sign of a tied zero is left out: torch's vector and scalar loops differ there.
    require_golden(y.values(), golden[name + ".y"], dtype, ulps, false, name + ".y");
    require_golden(a.grad_values(), golden[name + ".da"], dtype, ulps, false, name + ".da");
    require_golden(b.grad_values(), golden[name + ".db"], dtype, ulps, false, name + ".db");
  }
}

// A forward without gradient (comparisons, isnan, ...): y from the golden inputs named `inputs`
// ("a", "b" or "x"), bit for bit.
inline void check_forward_goldens(const std::string& case_name,
                                  const std::vector<std::string>& inputs,
                                  const std::function<Tensor(const std::vector<Tensor>&)>& f) {
  const GoldenFile& golden = elementwise2_goldens();
  for (const auto& [tag, dtype] : golden_dtypes()) {
    const std::string name = case_name + "." + tag;
    Tape tape;
    TapeScope scope(tape);
    std::vector<Tensor> x;
    for (const std::string& input : inputs) {
      const GoldenTensor& g = golden[name + "." + input];
      x.push_back(from_values(g.shape, g.values, dtype));
    }
    const Tensor y = f(x);
    CHECK(y.dtype() == dtype);
    require_golden(y.values(), golden[name + ".y"], dtype, 0, true, name + ".y");
  }
}

// An empty [0, 3] float32 input keeps its shape and gets an empty gradient.
inline void check_empty_input(const std::function<Tensor(const Tensor&)>& op) {
  Tape tape;
  TapeScope scope(tape);
  Tensor empty = requires_grad(zeros(Shape{0, 3}, DType::Float32));
  Tensor e = op(empty);
  CHECK(e.shape() == Shape{0, 3});
  sum(e).backward();
  CHECK(empty.grad_values().empty());
}

// A unary op's float64 gradcheck at every rank from 0 to 4 (unary_gradcheck_shapes), inputs
// uniform in [lo, hi).
inline void require_unary_gradcheck(const char* op, const std::function<Tensor(const Tensor&)>& f,
                                    double lo, double hi) {
  uint64_t seed = 350;
  for (const Shape& shape : unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report = gradcheck(op, [&](std::span<const Tensor> in) { return f(in[0]); },
                            {random_input(shape, ++seed, lo, hi)});
    require_gradcheck(report, op);
  }
}

// A binary op's float64 gradcheck over binary_gradcheck_shapes (broadcasting both ways), a's
// inputs uniform in [a_lo, a_hi), b's in [b_lo, b_hi).
inline void require_binary_gradcheck(const char* op,
                                     const std::function<Tensor(const Tensor&, const Tensor&)>& f,
                                     double a_lo, double a_hi, double b_lo, double b_hi) {
  uint64_t seed = 450;
  for (const auto& [sa, sb] : binary_gradcheck_shapes()) {
    INFO(sa.str() << " and " << sb.str());
    auto report =
        gradcheck(op, [&](std::span<const Tensor> in) { return f(in[0], in[1]); },
                  {random_input(sa, ++seed, a_lo, a_hi), random_input(sb, ++seed, b_lo, b_hi)});
    require_gradcheck(report, op);
  }
}

// A unary op's values and gradients (dY = 1) at special float64 inputs (NaN, ±inf, zeros,
// negatives) against what torch gives, NaN matching NaN; then an empty [0, 3] float32 input keeps
// its shape and gets an empty gradient.
inline void check_special_values(const std::function<Tensor(const Tensor&)>& op,
                                 std::initializer_list<double> inputs,
                                 const std::vector<double>& want,
                                 const std::vector<double>& dwant) {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor(inputs, DType::Float64));
  Tensor y = op(x);
  const std::vector<double> v = y.values();
  REQUIRE(v.size() == want.size());
  for (size_t i = 0; i < v.size(); ++i) {
    INFO(i);
    CHECK((std::isnan(want[i]) ? std::isnan(v[i]) : v[i] == want[i]));
  }
  tape.backward(y, std::vector<double>(v.size(), 1.0));
  const std::vector<double> g = x.grad_values();
  for (size_t i = 0; i < g.size(); ++i) {
    INFO(i);
    CHECK((std::isnan(dwant[i]) ? std::isnan(g[i]) : g[i] == Approx(dwant[i]).epsilon(1e-15)));
  }
  check_empty_input(op);
}

// Gradcheck inputs of both signs, |x| in [0.2, 1.5): away from the kink at 0.
inline GradcheckInput signed_away_from_zero(const Shape& shape, uint64_t seed) {
  GradcheckInput in = random_input(shape, seed, 0.2, 1.5);
  for (size_t i = 0; i < in.values.size(); i += 2) in.values[i] = -in.values[i];
  return in;
}

}  // namespace tapegrad::testing
