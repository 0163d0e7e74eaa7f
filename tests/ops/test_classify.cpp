// Tests for ops/classify.cpp (isnan, isinf, isfinite).
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("isnan, isinf, isfinite: 0/1 of x's dtype", "[isnan][isinf][isfinite]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({1.0, NAN, INFINITY, -INFINITY, -0.0, 1e-45}, DType::Float32);
  CHECK(isnan(x).values() == std::vector<double>{0, 1, 0, 0, 0, 0});
  CHECK(isinf(x).values() == std::vector<double>{0, 0, 1, 1, 0, 0});
  CHECK(isfinite(x).values() == std::vector<double>{1, 0, 0, 0, 1, 1});
  CHECK(isnan(x).dtype() == DType::Float32);
  CHECK(isinf(tensor({1.0}, DType::Float64)).dtype() == DType::Float64);
  CHECK(isfinite(zeros(Shape{3, 0})).shape() == Shape{3, 0});
}

TEST_CASE("isnan, isinf, isfinite: no gradient flows through them", "[isnan][isinf][isfinite]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({1.0, 2.0}, DType::Float64));
  Tensor y = sum(x * isfinite(x) + isnan(x) + isinf(x));
  CHECK(grad(y, {x}, {.retain_graph = true})[0].values() == std::vector<double>{1.0, 1.0});
  tape.backward(y);
  CHECK(x.grad_values() == std::vector<double>{1.0, 1.0});
}

TEST_CASE("isnan, isinf, isfinite: match torch", "[isnan][isinf][isfinite][goldens]") {
  testing::check_forward_goldens("isnan", {"x"},
                                 [](const std::vector<Tensor>& x) { return isnan(x[0]); });
  testing::check_forward_goldens("isinf", {"x"},
                                 [](const std::vector<Tensor>& x) { return isinf(x[0]); });
  testing::check_forward_goldens("isfinite", {"x"},
                                 [](const std::vector<Tensor>& x) { return isfinite(x[0]); });
}

#define CLASSIFY_GRADCHECK(op)                                                               \
  GRADCHECK_TEST_CASE(#op, "no gradient through the test") {                                 \
    auto report =                                                                            \
        gradcheck(#op, [](std::span<const Tensor> in) { return in[0] * (op(in[0]) + 1.0); }, \
                  {random_input({2, 3}, 47)});                                               \
    testing::require_gradcheck(report, #op);                                                 \
  }
CLASSIFY_GRADCHECK(isnan)
CLASSIFY_GRADCHECK(isinf)
CLASSIFY_GRADCHECK(isfinite)
