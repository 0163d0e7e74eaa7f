// Tests of the tests' own comparison helpers (tests/compare.h): a NaN must fail every tolerance.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "tests/compare.h"

using namespace tapegrad::testing;

namespace {
using tapegrad::testing::kNaN;
}

TEST_CASE("compare: a NaN error is the worst error and fails every tolerance", "[compare]") {
  CHECK(std::isnan(worse(0.0, kNaN)));
  CHECK(std::isnan(worse(kNaN, 0.5)));  // a NaN seen earlier is not forgotten
  CHECK(worse(0.25, 0.5) == 0.5);
  CHECK(worse(0.5, 0.25) == 0.5);

  MaxError err;
  err.add(1e-14);
  CHECK(err.within(1e-12));
  err.add(kNaN);
  err.add(1e-15);  // a later finite error does not hide the NaN
  CHECK_FALSE(err.within(1e-12));
  CHECK_FALSE(err.within(INFINITY));
}

TEST_CASE("compare: vector maxima see NaN anywhere and size mismatches", "[compare]") {
  const std::vector<double> expected{1.0, 2.0, 3.0};
  CHECK(max_abs_difference({1.0, 2.0, 3.0}, expected) == 0.0);
  CHECK(max_abs_difference({1.0, 2.5, 3.0}, expected) == 0.5);
  for (size_t at = 0; at < expected.size(); ++at) {
    std::vector<double> actual = expected;
    actual[at] = kNaN;
    INFO("NaN at " << at);
    CHECK_FALSE(max_abs_difference(actual, expected) <= 1.0);
    CHECK_FALSE(max_relative_error(actual, expected) <= 1.0);
  }
  CHECK_FALSE(max_abs_difference({1.0, 2.0}, expected) <= 1.0);
  CHECK(relative_error(1.001, 1.0) == Approx(1e-3));
  CHECK(relative_error(1e-6, 0.0) == Approx(1e-3));  // the floor judges values near zero
}
