// Tests for ops/cumsum.cpp.
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/reduction_shapes.h"
#include "tests/ops/reductions2_goldens.h"

using namespace tapegrad;

TEST_CASE("cumsum: running sums along a dim, the gradient sums from the end", "[cumsum]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, DType::Float64));
  Tensor y = cumsum(x, 1);
  CHECK(y.shape() == Shape{2, 3});
  CHECK(y.values() == std::vector<double>{1, 3, 6, 4, 9, 15});
  CHECK(cumsum(x, -2).values() == std::vector<double>{1, 2, 3, 5, 7, 9});
  tape.backward(y, std::vector<double>{1, 10, 100, 1, 2, 3});
  CHECK(x.grad_values() == std::vector<double>{111, 110, 100, 6, 5, 3});
  CHECK(cumsum(scalar(2.5), 0).item() == 2.5);
  CHECK(cumsum(zeros({0, 3}), 1).shape() == Shape{0, 3});
  CHECK_THROWS_WITH(cumsum(x, 2),
                    "cumsum: x [2, 3]: dim 2 is out of range for rank 2 "
                    "(expected -2..1)");
}

TEST_CASE("cumsum: matches torch bit for bit, NaN/±inf, 0-D, empty", "[cumsum][goldens]") {
  testing::check_reduction_goldens("cumsum_dim1", [](const Tensor& x) { return cumsum(x, 1); });
  testing::check_reduction_goldens("cumsum_dim0", [](const Tensor& x) { return cumsum(x, 0); });
  testing::check_reduction_goldens("cumsum_dims3", [](const Tensor& x) { return cumsum(x, -2); });
  testing::check_reduction_goldens("cumsum_scalar", [](const Tensor& x) { return cumsum(x, 0); });
  testing::check_reduction_goldens("cumsum_empty", [](const Tensor& x) { return cumsum(x, 1); });
}

GRADCHECK_TEST_CASE("cumsum", "ranks 0-4, every dim") {
  for (const auto& c : testing::dim_reduction_cases()) {
    if (c.keepdim) continue;  // cumsum has no keepdim
    INFO("shape " << c.shape.str() << " dim " << c.dim);
    auto report =
        gradcheck("cumsum", [&](std::span<const Tensor> in) { return cumsum(in[0], c.dim); },
                  {random_input(c.shape, 35)});
    testing::require_gradcheck(report, "cumsum");
  }
}
