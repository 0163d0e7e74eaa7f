// Tests for ops/log10.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("log10: small exact case, forward and backward", "[log10]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({1.0, 100.0, 0.001}, DType::Float64));
  Tensor y = log10(x);
  const std::vector<double> y_want{0.0, 2.0, -3.0};
  for (size_t i = 0; i < y_want.size(); ++i)
    CHECK(y.values()[i] == Approx(y_want[i]).epsilon(1e-15));
  tape.backward(y, std::vector<double>{1.0, 100.0, 1.0});  // dX = dY / (X·ln 10)
  const std::vector<double> expected{1.0 / testing::kLn10, 1.0 / testing::kLn10,
                                     1.0 / (0.001 * testing::kLn10)};
  const std::vector<double> g = x.grad_values();
  REQUIRE(g.size() == expected.size());
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(expected[i]).epsilon(1e-15));
}

TEST_CASE("log10: nan and ±inf as in torch, and empty tensors", "[log10]") {
  testing::check_special_values([](const Tensor& x) { return log10(x); },
                                {NAN, INFINITY, 0.0, -1.0}, {NAN, INFINITY, -INFINITY, NAN},
                                {NAN, 0.0, INFINITY, -1.0 / testing::kLn10});
}

TEST_CASE("log10: matches torch's forward and backward within 2 ulps, float32 and float64",
          "[log10][goldens]") {
  const int64_t log10_equal = testing::check_unary_goldens(
      "log10", [](const Tensor& x) { return log10(x); }, testing::kLibmUlps);
  INFO("log10: elements equal to torch's bit for bit: " << log10_equal);
  CHECK(log10_equal > 0);
  const int64_t log10_positive_equal = testing::check_unary_goldens(
      "log10_positive", [](const Tensor& x) { return log10(x); }, testing::kLibmUlps);
  INFO("log10_positive: elements equal to torch's bit for bit: " << log10_positive_equal);
  CHECK(log10_positive_equal > 0);
}

GRADCHECK_TEST_CASE("log10", "ranks 0 to 4") {
  for (const Shape& shape : testing::unary_gradcheck_shapes()) {
    INFO(shape.str());
    auto report = gradcheck("log10", [](std::span<const Tensor> in) { return log10(in[0]); },
                            {random_input(shape, 35, 0.3, 3.0)});
    testing::require_gradcheck(report, "log10");
  }
}
