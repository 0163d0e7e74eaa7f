// Tests for optim/clip.cpp: clipping by total norm (torch's coefficient) and by value.
#include <tapegrad/optim/clip.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <utility>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/optim/optim.h>

using namespace tapegrad;
using Catch::Contains;

namespace {

Parameter with_grad(const Shape& shape, const std::vector<double>& grad, DType dtype,
                    const char* name) {
  Parameter p(shape, dtype, name);
  for (size_t i = 0; i < grad.size(); ++i) {
    if (dtype == DType::Float32) {
      p.grad<float>()[i] = static_cast<float>(grad[i]);
    } else {
      p.grad<double>()[i] = grad[i];
    }
  }
  return p;
}

}  // namespace

TEST_CASE("clip_grad_norm_: scales all gradients together and returns the total norm",
          "[optim][clip]") {
  // Total 2-norm of {3} and {4, 0} is 5; torch scales by (1 / (5 + 1e-6))·max_norm.
  Parameter a = with_grad({1}, {3.0}, DType::Float64, "a");
  Parameter b = with_grad({2}, {4.0, 0.0}, DType::Float64, "b");
  const double norm = clip_grad_norm_({a, b}, /*max_norm=*/1.0);
  CHECK(norm == 5.0);
  const double coef = 1.0 / (5.0 + 1e-6) * 1.0;
  CHECK(a.grad_values() == std::vector<double>{3.0 * coef});
  CHECK(b.grad_values() == std::vector<double>{4.0 * coef, 0.0});
  // The clipped total norm is max_norm (up to the 1e-6 guard).
  CHECK(clip_grad_norm_({a, b}, 10.0) == Approx(1.0).epsilon(1e-6));
}

TEST_CASE("clip_grad_norm_: gradients under the limit are left exactly as they are",
          "[optim][clip]") {
  Parameter a = with_grad({3}, {0.1, -0.2, 0.3}, DType::Float32, "a");
  const std::vector<double> before = a.grad_values();
  const double norm = clip_grad_norm_({a}, 1.0);
  CHECK(norm == Approx(std::sqrt(0.14)).epsilon(1e-7));
  CHECK(a.grad_values() == before);  // the coefficient clamps to exactly 1
}

TEST_CASE("clip_grad_norm_: the inf-norm is the largest magnitude, other p-norms too",
          "[optim][clip]") {
  Parameter a = with_grad({3}, {0.5, -2.0, 1.0}, DType::Float64, "a");
  Parameter b = with_grad({1}, {1.5}, DType::Float64, "b");
  CHECK(clip_grad_norm_({a, b}, 100.0, INFINITY) == 2.0);
  CHECK(clip_grad_norm_({a, b}, 100.0, 1.0) == 5.0);
  CHECK(clip_grad_norm_({a, b}, 100.0, 3.0) ==
        Approx(std::cbrt(0.125 + 8.0 + 1.0 + 3.375)).epsilon(1e-15));
}

TEST_CASE("clip_grad_norm_: through an optimiser, across its groups", "[optim][clip]") {
  Parameter a = with_grad({1}, {6.0}, DType::Float32, "a");
  Parameter b = with_grad({1}, {8.0}, DType::Float32, "b");
  SGD optimizer({ParamGroup{.params = {a}}, ParamGroup{.params = {b}}}, SGDOptions{.lr = 1.0});
  CHECK(clip_grad_norm_(optimizer, 5.0) == 10.0);
  CHECK(a.grad_values()[0] == Approx(3.0).epsilon(1e-6));
  CHECK(b.grad_values()[0] == Approx(4.0).epsilon(1e-6));
}

TEST_CASE("clip_grad_norm_: bad arguments and non-finite norms throw, scaling nothing",
          "[optim][clip]") {
  Parameter a = with_grad({2}, {3.0, NAN}, DType::Float64, "a");
  CHECK_THROWS_WITH(clip_grad_norm_({a}, -1.0), "clip_grad_norm_: max_norm must be >= 0, got -1");
  CHECK_THROWS_WITH(clip_grad_norm_({a}, 1.0, 0.0),
                    "clip_grad_norm_: norm_type must be > 0 (or INFINITY), got 0");
  CHECK_THROWS_WITH(clip_grad_norm_({a}, 1.0, 2.0, /*error_if_nonfinite=*/true),
                    Contains("clip_grad_norm_: the total norm of order 2 of the gradients is nan"));
  CHECK(a.grad_values()[0] == 3.0);
  // Without the flag torch scales by the NaN coefficient anyway; so does tapegrad.
  CHECK(std::isnan(clip_grad_norm_({a}, 1.0)));
  CHECK(std::isnan(a.grad_values()[0]));
}

TEST_CASE("clip_grad_norm_: a parameter without a gradient is left out", "[optim][clip]") {
  Parameter a = with_grad({2}, {3.0, 4.0}, DType::Float32, "a");
  Parameter none({2}, DType::Float32, "none");
  CHECK(clip_grad_norm_({a, none}, 1.0) == 5.0);
  CHECK_FALSE(none.has_grad());
  clip_grad_value_({a, none}, 0.1);
  CHECK_FALSE(none.has_grad());
  CHECK(clip_grad_norm_({none}, 1.0) == 0.0);  // torch: no gradients, a norm of 0
}

TEST_CASE("clip_grad_value_: clamps every element to [-v, v]", "[optim][clip]") {
  Parameter a = with_grad({4}, {-3.0, -0.05, 0.02, 7.0}, DType::Float32, "a");
  Parameter frozen = with_grad({1}, {9.0}, DType::Float32, "frozen");
  frozen.set_requires_grad(false);
  clip_grad_value_({a, frozen}, 0.1);
  CHECK(a.grad_values() ==
        std::vector<double>{-0.1f, -0.05f, 0.02f, 0.1f});  // float32 values, widened
  CHECK(frozen.grad_values()[0] == 9.0);                   // not a trainable parameter
  CHECK_THROWS_WITH(clip_grad_value_({a}, -1.0),
                    "clip_grad_value_: clip_value must be >= 0, got -1");
}

TEST_CASE("clip_grad_norm_: the same norm and gradients with 1 and 2 threads", "[optim][clip]") {
  // 1.5M values: enough for the sum of squares and the scaling to split over two threads.
  const int64_t n = 1'500'007;
  std::vector<double> grad(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) grad[static_cast<size_t>(i)] = std::sin(0.001 * i) * 1e-2;
  auto run = [&](int threads) {
    set_num_threads(threads);
    Parameter p = with_grad({n}, grad, DType::Float32, "p");
    const double norm = clip_grad_norm_({p}, 1.0);
    set_num_threads(1);
    return std::make_pair(norm, p.grad_values());
  };
  const auto one = run(1);
  const auto two = run(2);
  CHECK(one.first > 1.0);  // large enough to be clipped
  CHECK(one.first == two.first);
  CHECK(one.second == two.second);
}
