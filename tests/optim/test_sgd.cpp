// Tests for optim/sgd.cpp.
#include <catch2/catch.hpp>
#include <limits>

#include "graph/factory.h"
#include "ops/ops.h"
#include "optim/sgd.h"

using namespace tapegrad;

TEST_CASE("SGD: step subtracts lr times the gradient, in each parameter's dtype", "[sgd]") {
  Parameter a =
      Parameter::from_values({3}, std::vector<double>{1.0, -2.0, 0.5}, DType::Float32, "a");
  Parameter b = Parameter::from_values({2}, std::vector<double>{0.1, 0.2}, DType::Float64, "b");
  const float ga[] = {0.5f, 1.0f, -4.0f};
  const double gb[] = {1.0, -3.0};
  std::copy(ga, ga + 3, a.grad<float>());
  std::copy(gb, gb + 2, b.grad<double>());

  SGD sgd({a, b}, 0.25);
  sgd.step();
  CHECK(a.values() == std::vector<double>{0.875, -2.25, 1.5});
  // In float64: 0.1 - 0.25 * 1.0 and 0.2 + 0.25 * 3.0, rounded as torch rounds them.
  CHECK(b.values() == std::vector<double>{0.1 + (-0.25) * 1.0, 0.2 + (-0.25) * -3.0});
  // The gradient is left alone: zero_grad is the caller's.
  CHECK(a.grad_values() == std::vector<double>{0.5, 1.0, -4.0});

  sgd.zero_grad();
  CHECK(a.grad_values() == std::vector<double>{0.0, 0.0, 0.0});
  CHECK(b.grad_values() == std::vector<double>{0.0, 0.0});
}

TEST_CASE("SGD: float32 update rounds like torch's add_(grad, alpha=-lr)", "[sgd]") {
  Parameter p = Parameter::from_values({1}, std::vector<double>{0.3}, DType::Float32);
  p.grad<float>()[0] = 0.7f;
  SGD sgd({p}, 0.1);
  sgd.step();
  const float expected = 0.3f + static_cast<float>(-0.1) * 0.7f;
  CHECK(p.data<float>()[0] == expected);
}

TEST_CASE("SGD: parameters that do not require grad are not updated", "[sgd]") {
  Parameter frozen = Parameter::from_values({2}, std::vector<double>{1.0, 2.0});
  frozen.set_requires_grad(false);
  frozen.grad<float>()[0] = 5.0f;
  SGD sgd({frozen}, 1.0);
  sgd.step();
  CHECK(frozen.values() == std::vector<double>{1.0, 2.0});
}

TEST_CASE("SGD: a step after backward lowers the loss", "[sgd]") {
  // loss = sum(x·W): dloss/dW = xᵀ·1, the column sums of x.
  Parameter W = Parameter::from_values({2, 1}, std::vector<double>{1.0, 1.0}, DType::Float64, "W");
  SGD sgd({W}, 0.5);
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({{1.0, 2.0}, {3.0, 4.0}}, DType::Float64);  // [2, 2]
  Tensor loss = sum(matmul(x, W));                              // 1+2+3+4 = 10
  CHECK(loss.item() == 10.0);
  sgd.zero_grad();
  loss.backward();
  CHECK(W.grad_values() == std::vector<double>{4.0, 6.0});  // column sums of x
  sgd.step();
  CHECK(W.values() == std::vector<double>{1.0 - 0.5 * 4.0, 1.0 - 0.5 * 6.0});

  tape.reset();
  Tensor x2 = tensor({{1.0, 2.0}, {3.0, 4.0}}, DType::Float64);
  CHECK(sum(matmul(x2, W)).item() < 10.0);
}

TEST_CASE("SGD: invalid learning rates and undefined parameters are rejected", "[sgd][errors]") {
  Parameter p({2});
  CHECK_THROWS_WITH(SGD({p}, -0.1), Catch::Contains("SGD: invalid learning rate"));
  CHECK_THROWS_WITH(SGD({p}, std::numeric_limits<double>::quiet_NaN()),
                    Catch::Contains("invalid learning rate"));
  CHECK_THROWS_WITH(SGD({p, Parameter()}, 0.1), Catch::Contains("parameter 1 is undefined"));
  SGD sgd({p}, 0.1);
  CHECK_THROWS_WITH(sgd.set_lr(-1.0), Catch::Contains("invalid learning rate"));
  CHECK(sgd.lr() == 0.1);
}
