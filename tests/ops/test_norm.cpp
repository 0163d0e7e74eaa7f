// Tests for ops/norm.cpp (p = 1, 2, inf).
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/reductions2_goldens.h"

using namespace tapegrad;

TEST_CASE("norm: p = 1, 2, inf over dims, the gradient at 0 is 0", "[norm]") {
  Tape tape;
  TapeScope scope(tape);
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = requires_grad(tensor({{3.0, -4.0, 0.0}, {0.0, 0.0, 0.0}}, DType::Float64));
  CHECK(norm(x).item() == 5.0);
  CHECK(norm(x, 1.0, 1).values() == std::vector<double>{7.0, 0.0});
  CHECK(norm(x, inf, {0}, true).values() == std::vector<double>{3.0, 4.0, 0.0});
  CHECK(norm(x, 2.0, {-1}, true).shape() == Shape{2, 1});
  Tensor y = norm(x, 2.0, 1);
  tape.backward(y, std::vector<double>{10.0, 10.0});
  CHECK(x.grad_values() == std::vector<double>{6.0, -8.0, 0.0, 0.0, 0.0, 0.0});
  CHECK(norm(zeros({0, 3}), 2.0, 0).values() == std::vector<double>{0.0, 0.0, 0.0});
  CHECK_THROWS_WITH(norm(x, 3.0), "norm: x [2, 3]: p = 3 is not supported (1, 2 or inf)");
  CHECK_THROWS_WITH(norm(x, 2.0, {1, 1}),
                    Catch::Contains("norm") && Catch::Contains("appears more than once"));
}

TEST_CASE("norm: p = inf shares the gradient among ties of |x|, signs kept", "[norm]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({-2.0, 2.0, 1.0}, DType::Float64));
  norm(x, std::numeric_limits<double>::infinity()).backward();
  CHECK(x.grad_values() == std::vector<double>{-0.5, 0.5, 0.0});
}

TEST_CASE("norm: matches torch, zero rows, ties, NaN, 0-D, empty", "[norm][goldens]") {
  const testing::GoldenUlps ulps{.y = 4, .dx = 4};
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<std::pair<std::string, double>> orders{{"1", 1.0}, {"2", 2.0}, {"inf", inf}};
  for (const auto& order : orders) {
    const double p = order.second;
    const std::string n = "norm" + order.first;
    testing::check_reduction_goldens(
        n + "_dim1", [p](const Tensor& x) { return norm(x, p, 1); }, ulps);
    testing::check_reduction_goldens(
        n + "_all", [p](const Tensor& x) { return norm(x, p); }, ulps);
    testing::check_reduction_goldens(
        n + "_dims_keep",
        [p](const Tensor& x) {
          return norm(x, p, {0, 2}, true);
        },
        ulps);
    testing::check_reduction_goldens(
        n + "_scalar", [p](const Tensor& x) { return norm(x, p); }, ulps);
    testing::check_reduction_goldens(
        n + "_empty", [p](const Tensor& x) { return norm(x, p, 0); }, ulps);
  }
}

GRADCHECK_TEST_CASE("norm", "p = 1, 2, inf, ranks 0-4, dim lists, keepdim, away from 0 and ties") {
  for (const double p : {1.0, 2.0, std::numeric_limits<double>::infinity()}) {
    for (const auto& c : testing::dims_reduction_cases()) {
      INFO("p " << p << " " << testing::dims_case_text(c));
      GradcheckInput in = testing::distinct_reduction_input(c.shape, 34);
      for (size_t i = 0; i < in.values.size(); i += 2) in.values[i] = -in.values[i];
      auto report = gradcheck(
          "norm", [&](std::span<const Tensor> t) { return norm(t[0], p, c.dims, c.keepdim); },
          {in});
      testing::require_gradcheck(report, "norm");
    }
  }
}
