// Tests for ops/pow_tensor.cpp: torch.pow with a tensor exponent, values and both gradients.
#include <cstdio>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise3_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("pow with a tensor exponent: torch goldens (zero bases and exponents, broadcast)",
          "[pow_tensor][goldens]") {
  // torch's kernel calls SLEEF's 1-ulp pow on vectors: a value may differ in the last bit, a
  // gradient (its product with a log or another power) in the last few.
  const auto f = [](const std::vector<Tensor>& x) { return pow(x[0], x[1]); };
  testing::check_elementwise3("pow_tensor", {"x", "p"}, f, true, 4);
  testing::check_elementwise3("pow_tensor_broadcast", {"x", "p"}, f, true, 4);
}

TEST_CASE("pow with a number base: torch goldens (0, 1, negative, nan and ±inf exponents)",
          "[pow_tensor][goldens]") {
  for (const double base : {2.0, 0.5, 0.0, 1.0, -2.0}) {
    char name[40];
    std::snprintf(name, sizeof name, "pow_scalar_base_%.1f", base);
    testing::check_elementwise3(
        name, {"p"}, [base](const std::vector<Tensor>& x) { return pow(base, x[0]); }, true, 4);
  }
}

TEST_CASE("pow with a tensor exponent: torch's gradients at a zero base", "[pow_tensor]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = requires_grad(tensor({0.0, 0.0, 0.0, 2.0}, DType::Float64));
  const Tensor p = requires_grad(tensor({2.0, 0.0, -1.0, 0.0}, DType::Float64));
  sum(pow(x, p)).backward();
  // dX: 0 where p = 0 (even at x = 0), p·x^(p−1) elsewhere (−inf for 0^−2 times −1: −1·inf)
  CHECK(x.grad_values() == std::vector<double>{0.0, 0.0, -INFINITY, 0.0});
  // dP: 0 where x = 0 and p >= 0, y·ln x elsewhere (inf·−inf at 0^−1)
  CHECK(p.grad_values() == std::vector<double>{0.0, 0.0, -INFINITY, std::log(2.0)});
}

TEST_CASE("pow with a tensor exponent: shapes and dtypes must agree", "[pow_tensor][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(pow(zeros({2, 3}), zeros({2})),
                    Catch::StartsWith("pow_tensor: a [2, 3] and b [2]: cannot broadcast"));
  CHECK_THROWS_WITH(pow(zeros({2}), zeros({2}, DType::Float64)),
                    Catch::Contains("is float32 but b [2] is float64"));
}

GRADCHECK_TEST_CASE("pow_tensor", "positive bases, broadcast exponents") {
  auto report =
      gradcheck("pow_tensor", [](std::span<const Tensor> in) { return pow(in[0], in[1]); },
                {random_input({2, 3}, 6, 0.5, 2.0), random_input({3}, 7)});
  testing::require_gradcheck(report, "pow_tensor");
}

GRADCHECK_TEST_CASE("pow_tensor", "a number base") {
  testing::require_gradcheck(gradcheck("pow_tensor_scalar_base",
                                       [](std::span<const Tensor> in) { return pow(2.5, in[0]); },
                                       {random_input({2, 3}, 8)}),
                             "pow_tensor");
}
