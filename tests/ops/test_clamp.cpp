// Tests for ops/clamp.cpp (clamp, clamp_min, clamp_max) and ops/clamp_tensor.cpp (tensor bounds,
// clip).
#include <cmath>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("clamp: forward, and the gradient passes at the bounds too", "[clamp]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({-3.0, -1.0, 0.25, 1.0, 4.0, NAN, INFINITY}, DType::Float64));
  Tensor y = clamp(x, -1.0, 1.0);
  const std::vector<double> v = y.values();
  CHECK(std::vector<double>(v.begin(), v.begin() + 5) ==
        std::vector<double>{-1.0, -1.0, 0.25, 1.0, 1.0});
  CHECK(std::isnan(v[5]));  // nan stays nan
  CHECK(v[6] == 1.0);
  // dX = dY where −1 <= X <= 1 (bounds included, torch's subgradient 1); nan X: 0
  tape.backward(y, std::vector<double>{2, 3, 4, 5, 6, 7, 8});
  CHECK(x.grad_values() == std::vector<double>{0.0, 3.0, 4.0, 5.0, 0.0, 0.0, 0.0});
}

TEST_CASE("clamp_min, clamp_max, one bound, crossed bounds", "[clamp]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({-2.0, 0.5, 3.0}, DType::Float64));
  CHECK(clamp_min(x, 0.5).values() == std::vector<double>{0.5, 0.5, 3.0});
  CHECK(clamp_max(x, 0.5).values() == std::vector<double>{-2.0, 0.5, 0.5});
  CHECK(clamp(x, std::nullopt, 0.5).values() == std::vector<double>{-2.0, 0.5, 0.5});
  // min > max: max everywhere, as torch; the gradient passes nowhere (no X is in [2, 1])
  Tensor crossed = clamp(x, 2.0, 1.0);
  CHECK(crossed.values() == std::vector<double>{1.0, 1.0, 1.0});
  CHECK(grad(sum(crossed), {x}, {.retain_graph = true})[0].values() ==
        std::vector<double>{0.0, 0.0, 0.0});
  CHECK(grad(sum(clamp_min(x, 0.5)), {x}, {.retain_graph = true})[0].values() ==
        std::vector<double>{0.0, 1.0, 1.0});
  CHECK(grad(sum(clamp_max(x, 0.5)), {x}, {.retain_graph = true})[0].values() ==
        std::vector<double>{1.0, 1.0, 0.0});
  // A nan bound compares false and leaves x (torch 1.13's kernel)
  CHECK(clamp_min(x, NAN).values() == std::vector<double>{-2.0, 0.5, 3.0});
  CHECK(clamp(zeros(Shape{0}), 0.0, 1.0).shape() == Shape{0});
}

TEST_CASE("clamp: the bounds are rounded to x's dtype first", "[clamp]") {
  Tape tape;
  TapeScope scope(tape);
  // float32(0.1) is above 0.1: compared with the double 0.1 it would lie outside the bound and
  // get no gradient; with torch's bound, float32(0.1), it sits on it and the gradient passes
  Tensor x = requires_grad(tensor({0.1}, DType::Float32));
  Tensor y = clamp_max(x, 0.1);
  CHECK(y.values()[0] == static_cast<double>(0.1f));
  y.backward();
  CHECK(x.grad_values()[0] == 1.0);
}

TEST_CASE("clamp: errors name the op and the tensor", "[clamp][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({1.0, 2.0});
  CHECK_THROWS_WITH(clamp(x, std::nullopt, std::nullopt),
                    Catch::Contains("clamp") && Catch::Contains("[2]") &&
                        Catch::Contains("at least one of min and max"));
  CHECK_THROWS_WITH(clamp_max(x, 1e300), Catch::Contains("clamp") && Catch::Contains("overflows"));
  CHECK_NOTHROW(clamp_max(tensor({1.0}, DType::Float64), 1e300));
}

TEST_CASE("clamp: matches torch bit for bit, bounds, nan and ±inf included", "[clamp][goldens]") {
  testing::check_unary_goldens(
      "clamp", [](const Tensor& x) { return clamp(x, -1.0, 1.0); }, 0);
  testing::check_unary_goldens(
      "clamp_min", [](const Tensor& x) { return clamp_min(x, 0.5); }, 0);
  testing::check_unary_goldens(
      "clamp_max", [](const Tensor& x) { return clamp_max(x, -0.5); }, 0);
  testing::check_unary_goldens(
      "clamp_crossed", [](const Tensor& x) { return clamp(x, 2.0, 1.0); }, 0);
}

GRADCHECK_TEST_CASE("clamp", "both bounds, one bound, ranks 0 to 4, away from the bounds") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    const auto in = random_input(shape, 40, -2.0, 2.0);
    testing::require_gradcheck(
        gradcheck("clamp", [](std::span<const Tensor> x) { return clamp(x[0], -0.7, 0.9); }, {in}),
        "clamp");
    testing::require_gradcheck(
        gradcheck("clamp_min", [](std::span<const Tensor> x) { return clamp_min(x[0], 0.3); },
                  {in}),
        "clamp");
    testing::require_gradcheck(
        gradcheck("clamp_max", [](std::span<const Tensor> x) { return clamp_max(x[0], 0.3); },
                  {in}),
        "clamp");
  }
}

namespace test_clamp {

// clamp with tensor bounds against torch (clamp_tensor.txt): y bit for bit with its zero signs,
// each gradient bit for bit (dy holds halves: the broadcast sums are exact).
void check_tensor_bounds_case(const std::string& name, const std::string& tag, DType dtype) {
  static const testing::GoldenFile golden("elementwise2", "clamp_tensor.txt");
  const std::string prefix = "clamp_tensor." + name + "." + tag;
  INFO(prefix);
  Tape tape;
  TapeScope scope(tape);
  auto leaf = [&](const std::string& key) {
    if (!golden.contains(prefix + "." + key)) return Tensor();
    const testing::GoldenTensor& g = golden[prefix + "." + key];
    return from_values(g.shape, g.values, dtype, true);
  };
  const Tensor x = leaf("x"), lo = leaf("min"), hi = leaf("max");
  const Tensor y = clamp(x, lo, hi);
  REQUIRE(y.shape() == golden[prefix + ".y"].shape);
  testing::require_golden(y.values(), golden[prefix + ".y"], dtype, 0, true, "y");
  tape.backward(y, golden[prefix + ".dy"].values);
  testing::require_golden(x.grad_values(), golden[prefix + ".dx"], dtype, 0, false, "dx");
  if (lo.defined()) {
    testing::require_golden(lo.grad_values(), golden[prefix + ".dmin"], dtype, 0, false, "dmin");
  }
  if (hi.defined()) {
    testing::require_golden(hi.grad_values(), golden[prefix + ".dmax"], dtype, 0, false, "dmax");
  }
}

}  // namespace test_clamp

TEST_CASE("clamp with tensor bounds: torch's values and gradients, nan, ties and broadcasts",
          "[clamp][goldens]") {
  for (const auto& [tag, dtype] : testing::golden_dtypes()) {
    for (const char* name : {"both", "both_nan_max", "min_equal_max", "min_only", "max_only",
                             "scalar_bounds", "all_scalar", "empty"}) {
      test_clamp::check_tensor_bounds_case(name, tag, dtype);
    }
  }
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = tensor({-2.0, 0.5, 3.0});
  CHECK(clip(x, tensor({0.0}), tensor({1.0})).values() == std::vector<double>{0.0, 0.5, 1.0});
  CHECK(clip(x, 0.0, 1.0).values() == std::vector<double>{0.0, 0.5, 1.0});  // torch's alias
}

TEST_CASE("clamp with tensor bounds: errors name the op, the tensors and the shapes",
          "[clamp][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = tensor({1.0, 2.0});
  CHECK_THROWS_WITH(clamp(x, Tensor(), Tensor()),
                    Catch::StartsWith("clamp: ") && Catch::Contains("at least one of min and max"));
  CHECK_THROWS_WITH(clamp(x, tensor({0.0, 1.0, 2.0}), Tensor()),
                    Catch::StartsWith("clamp: ") && Catch::Contains("[2]") &&
                        Catch::Contains("[3]") && Catch::Contains("cannot broadcast min"));
  CHECK_THROWS_WITH(clamp(x, Tensor(), tensor({1.0}, DType::Float64)),
                    Catch::StartsWith("clamp: ") && Catch::Contains("float64"));
}

// The tensor-bound clamp records no op of its own: its gradients are where's (and the masks').
GRADCHECK_TEST_CASE("where", "clamp with tensor bounds, broadcast, away from the bounds") {
  // x² in [0, 2.25] against min [3] in [0.2, 0.6] and max [2, 1] in [0.9, 1.4]: some values
  // below, inside and above; min > max nowhere.
  testing::require_gradcheck(
      gradcheck("clamp_tensor",
                [](std::span<const Tensor> in) { return clamp(in[0] * in[0], in[1], in[2]); },
                {random_input({2, 3}, 301, -1.5, 1.5), random_input({3}, 302, 0.2, 0.6),
                 random_input({2, 1}, 303, 0.9, 1.4)}),
      "where");
  testing::require_gradcheck(
      gradcheck("clamp_tensor_min",
                [](std::span<const Tensor> in) { return clamp(in[0] * in[0], in[1], Tensor()); },
                {random_input({2, 3}, 304, -1.5, 1.5), random_input({3}, 305, 0.2, 1.4)}),
      "where");
}
