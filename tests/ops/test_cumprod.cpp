// Tests for ops/cumprod.cpp.
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/reduction_shapes.h"
#include "tests/ops/reductions2_goldens.h"

using namespace tapegrad;

TEST_CASE("cumprod: running products, the gradient with and without zeros", "[cumprod]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({{2.0, 3.0, 4.0}, {2.0, 0.0, 5.0}}, DType::Float64));
  Tensor y = cumprod(x, 1);
  CHECK(y.values() == std::vector<double>{2, 6, 24, 2, 0, 0});
  CHECK(cumprod(x, 0).values() == std::vector<double>{2, 3, 4, 4, 0, 20});
  sum(y).backward();
  // Row 0: d/dx0 (x0 + x0x1 + x0x1x2) = 1 + 3 + 12, ...; row 1 (x1 = 0): 1, x0 + x0x2, 0.
  CHECK(x.grad_values() == std::vector<double>{16, 10, 6, 1, 12, 0});
  CHECK(cumprod(scalar(2.5), -1).item() == 2.5);
  CHECK(cumprod(zeros({0, 3}), 0).shape() == Shape{0, 3});
  CHECK_THROWS_WITH(cumprod(x, -3), Catch::Contains("cumprod: x [2, 3]: dim -3"));
}

TEST_CASE("cumprod: the second derivative at a zero", "[cumprod][grad]") {
  Tape tape;
  TapeScope scope(tape);
  // Σ cumprod(a, b, c) = a + ab + abc at (2, 0, 5): ∂/∂b = a + ac = 12, whose gradient is
  // (1 + c, 0, a) = (6, 0, 2).
  Tensor x = requires_grad(tensor({2.0, 0.0, 5.0}, DType::Float64));
  const Tensor dx = grad(sum(cumprod(x, 0)), {x}, {.create_graph = true})[0];
  CHECK(dx.values() == std::vector<double>{1.0, 12.0, 0.0});
  CHECK(grad(select(dx, 0, 1), {x})[0].values() == std::vector<double>{6.0, 0.0, 2.0});
}

TEST_CASE("cumprod: matches torch, zeros, NaN/±inf, 0-D, empty", "[cumprod][goldens]") {
  const testing::GoldenUlps ulps{.y = 0, .dx = 4};
  testing::check_reduction_goldens(
      "cumprod_dim1", [](const Tensor& x) { return cumprod(x, 1); }, ulps);
  testing::check_reduction_goldens(
      "cumprod_dim0", [](const Tensor& x) { return cumprod(x, 0); }, ulps);
  testing::check_reduction_goldens(
      "cumprod_zeros", [](const Tensor& x) { return cumprod(x, 1); }, ulps);
  testing::check_reduction_goldens(
      "cumprod_special", [](const Tensor& x) { return cumprod(x, 1); }, ulps);
  testing::check_reduction_goldens(
      "cumprod_scalar", [](const Tensor& x) { return cumprod(x, 0); }, ulps);
  testing::check_reduction_goldens(
      "cumprod_empty", [](const Tensor& x) { return cumprod(x, 0); }, ulps);
}

GRADCHECK_TEST_CASE("cumprod", "ranks 0-4, every dim, with and without zeros") {
  for (const auto& c : testing::dim_reduction_cases()) {
    if (c.keepdim) continue;  // cumprod has no keepdim
    INFO("shape " << c.shape.str() << " dim " << c.dim);
    auto report =
        gradcheck("cumprod", [&](std::span<const Tensor> in) { return cumprod(in[0], c.dim); },
                  {random_input(c.shape, 36)});
    testing::require_gradcheck(report, "cumprod");
  }
  GradcheckInput zeros_in = random_input({3, 4}, 37);
  zeros_in.values[1] = 0.0;
  zeros_in.values[8] = zeros_in.values[10] = 0.0;
  for (int dim : {0, 1}) {
    INFO("zeros, dim " << dim);
    testing::require_gradcheck(
        gradcheck("cumprod", [dim](std::span<const Tensor> in) { return cumprod(in[0], dim); },
                  {zeros_in}),
        "cumprod");
  }
}
