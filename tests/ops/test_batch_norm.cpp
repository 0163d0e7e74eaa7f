// Tests for ops/batch_norm.cpp (its torch goldens run through nn::BatchNorm:
// tests/nn/test_norms.cpp).
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("batch_norm: gradcheck and gradgradcheck in float64, training and eval",
          "[batch_norm][grad]") {
  const std::vector<GradcheckInput> inputs = {random_input({3, 2, 2}, 61, -2.0, 2.0),
                                              random_input({2}, 62), random_input({2}, 63)};
  auto train = [](std::span<const Tensor> in) {
    return batch_norm(in[0], Parameter(), Parameter(), in[1], in[2], true);
  };
  // A composite: the checks record its ops (mean, mul, rsqrt, ...).
  testing::require_gradcheck(gradcheck("batch_norm", train, inputs), "rsqrt");
  testing::require_gradcheck(gradgradcheck("batch_norm", train, inputs), "rsqrt");
  auto eval = [](std::span<const Tensor> in) {
    const Parameter rm = Parameter::from_values({2}, {0.5, -1.0}, DType::Float64);
    const Parameter rv = Parameter::from_values({2}, {2.0, 0.25}, DType::Float64);
    return batch_norm(in[0], rm, rv, in[1], in[2], false);
  };
  testing::require_gradcheck(gradcheck("batch_norm", eval, inputs), "rsqrt");
}

TEST_CASE("batch_norm: the running statistics move by momentum, by the unbiased variance",
          "[batch_norm]") {
  Tape tape;
  TapeScope scope(tape);
  Parameter rm = Parameter::from_values({1}, {1.0}, DType::Float64);
  Parameter rv = Parameter::from_values({1}, {1.0}, DType::Float64);
  Tensor x = tensor({1.0, 2.0, 3.0, 6.0}, DType::Float64);
  batch_norm(reshape(x, {4, 1}), rm, rv, Tensor(), Tensor(), true, 0.25);
  CHECK(rm.values()[0] == 0.75 * 1.0 + 0.25 * 3.0);
  CHECK(rv.values()[0] == Approx(0.75 * 1.0 + 0.25 * (14.0 / 3.0)).epsilon(1e-15));
}

TEST_CASE("batch_norm: bad arguments are Errors naming the op, the argument and the shapes",
          "[batch_norm][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 3, 4});
  const Parameter three(Shape{3});
  CHECK_THROWS_WITH(batch_norm(zeros({3}), three, three), Catch::Contains("[N, C, *]"));
  CHECK_THROWS_WITH(batch_norm(x, Parameter(Shape{4}), three),
                    Catch::Contains("batch_norm") && Catch::Contains("running_mean [4]") &&
                        Catch::Contains("[2, 3, 4]"));
  CHECK_THROWS_WITH(batch_norm(x, three, Parameter(Shape{3}, DType::Float64)),
                    Catch::Contains("running_var [3] float64"));
  CHECK_THROWS_WITH(batch_norm(x, Parameter(), Parameter()),
                    Catch::Contains("must be given when not training"));
  CHECK_THROWS_WITH(batch_norm(x, three, three, zeros({2})), Catch::Contains("weight [2]"));
  CHECK_THROWS_WITH(batch_norm(zeros({1, 3}), three, three, Tensor(), Tensor(), true),
                    Catch::Contains("more than 1 value per channel"));
  CHECK_THROWS_WITH(batch_norm(x, three, three, Tensor(), Tensor(), true, 0.1, -1.0),
                    Catch::Contains("eps"));
}
