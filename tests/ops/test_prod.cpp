// Tests for ops/prod.cpp (prod, prod_dim).
#include <cmath>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/reduction_shapes.h"
#include "tests/ops/reductions2_goldens.h"

using namespace tapegrad;

TEST_CASE("prod: all elements and along a dim, zeros get the product of the others", "[prod]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({{2.0, 0.0, 3.0}, {1.5, -2.0, 4.0}}, DType::Float64));
  Tensor rows = prod(x, 1);
  CHECK(rows.values() == std::vector<double>{0.0, -12.0});
  CHECK(prod(x, 0, true).shape() == Shape{1, 3});
  CHECK(prod(x).item() == 0.0);
  tape.backward(rows, std::vector<double>{1.0, 1.0});
  CHECK(x.grad_values() == std::vector<double>{0.0, 6.0, 0.0, -8.0, 6.0, -3.0});
  tape.reset();
  // One zero among all elements: only it gets a gradient; two zeros: none does.
  Tensor one = requires_grad(tensor({2.0, 0.0, 3.0}, DType::Float64));
  Tensor two = requires_grad(tensor({0.0, 5.0, 0.0}, DType::Float64));
  prod(one).backward({.retain_graph = true});
  CHECK(one.grad_values() == std::vector<double>{0.0, 6.0, 0.0});
  prod(two).backward();
  CHECK(two.grad_values() == std::vector<double>{0.0, 0.0, 0.0});
  CHECK(prod(zeros({0, 3})).item() == 1.0);
  CHECK(prod(zeros({0, 3}), 0).values() == std::vector<double>{1.0, 1.0, 1.0});
  CHECK_THROWS_WITH(prod(zeros({2, 3}), 2), Catch::Contains("prod_dim: x [2, 3]: dim 2"));
}

TEST_CASE("prod: the second derivative at a zero, through the product of the others",
          "[prod][grad]") {
  Tape tape;
  TapeScope scope(tape);
  // y = a·b·c at (2, 0, 3): ∂y/∂b = a·c, and ∂²y/∂b∂a = c, ∂²y/∂b∂c = a.
  Tensor x = requires_grad(tensor({2.0, 0.0, 3.0}, DType::Float64));
  const Tensor dx = grad(prod(x), {x}, {.create_graph = true})[0];
  CHECK(dx.values() == std::vector<double>{0.0, 6.0, 0.0});
  const Tensor d2 = grad(select(dx, 0, 1), {x})[0];
  CHECK(d2.values() == std::vector<double>{3.0, 0.0, 2.0});
  tape.reset();
  Tensor m = requires_grad(tensor({{2.0, 0.0}, {3.0, 5.0}}, DType::Float64));
  const Tensor dm = grad(sum(prod(m, 1)), {m}, {.create_graph = true})[0];
  CHECK(dm.values() == std::vector<double>{0.0, 2.0, 5.0, 3.0});
  CHECK(grad(select(select(dm, 0, 0), 0, 0), {m})[0].values() ==
        std::vector<double>{0.0, 1.0, 0.0, 0.0});
}

TEST_CASE("prod: matches torch, zeros, ±inf and NaN, 0-D and empty", "[prod][goldens]") {
  const testing::GoldenUlps ulps{.y = 4, .dx = 4};
  testing::check_reduction_goldens(
      "prod_all", [](const Tensor& x) { return prod(x); }, ulps);
  testing::check_reduction_goldens(
      "prod_all_zero", [](const Tensor& x) { return prod(x); }, ulps);
  testing::check_reduction_goldens(
      "prod_all_zeros", [](const Tensor& x) { return prod(x); }, ulps);
  testing::check_reduction_goldens(
      "prod_dim1", [](const Tensor& x) { return prod(x, 1); }, ulps);
  testing::check_reduction_goldens(
      "prod_dim1_zero", [](const Tensor& x) { return prod(x, 1); }, ulps);
  testing::check_reduction_goldens(
      "prod_dim0_keep_zeros", [](const Tensor& x) { return prod(x, 0, true); }, ulps);
  testing::check_reduction_goldens(
      "prod_inf", [](const Tensor& x) { return prod(x, 1); }, ulps);
  testing::check_reduction_goldens(
      "prod_scalar", [](const Tensor& x) { return prod(x); }, ulps);
  testing::check_reduction_goldens(
      "prod_dim_scalar", [](const Tensor& x) { return prod(x, 0); }, ulps);
  testing::check_reduction_goldens(
      "prod_empty", [](const Tensor& x) { return prod(x); }, ulps);
  testing::check_reduction_goldens(
      "prod_empty_dim0", [](const Tensor& x) { return prod(x, 0); }, ulps);
}

GRADCHECK_TEST_CASE("prod", "ranks 0-3") {
  for (const Shape& shape : {Shape{}, Shape{5}, Shape{3, 4}, Shape{2, 3, 2}}) {
    auto report = gradcheck("prod", [](std::span<const Tensor> in) { return prod(in[0]); },
                            {random_input(shape, 31, 0.5, 1.5)});
    testing::require_gradcheck(report, "prod");
  }
}

GRADCHECK_TEST_CASE("prod_dim", "ranks 0-4, every dim, keepdim both ways, with and without zeros") {
  for (const auto& c : testing::dim_reduction_cases()) {
    INFO("shape " << c.shape.str() << " dim " << c.dim << " keepdim " << c.keepdim);
    const auto f = [&](std::span<const Tensor> in) { return prod(in[0], c.dim, c.keepdim); };
    testing::require_gradcheck(gradcheck("prod_dim", f, {random_input(c.shape, 32)}), "prod_dim");
  }
  // Exact zeros (one row with one, one with two): the product-of-the-others path.
  GradcheckInput zeros_in = random_input({3, 4}, 33);
  zeros_in.values[1] = 0.0;
  zeros_in.values[8] = zeros_in.values[10] = 0.0;
  for (int dim : {0, 1}) {
    INFO("zeros, dim " << dim);
    testing::require_gradcheck(
        gradcheck("prod_dim", [dim](std::span<const Tensor> in) { return prod(in[0], dim); },
                  {zeros_in}),
        "prod_dim");
  }
}
