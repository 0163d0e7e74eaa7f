// Tests for ops/maximum_minimum.cpp (maximum, minimum).
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("maximum, minimum: small case, a tie splits the gradient evenly", "[maximum][minimum]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = requires_grad(tensor({1.0, 5.0, 2.0, -1.0}, DType::Float64));
  Tensor b = requires_grad(tensor({3.0, 5.0, 0.0, -1.0}, DType::Float64));
  Tensor hi = maximum(a, b), lo = minimum(a, b);
  CHECK(hi.values() == std::vector<double>{3.0, 5.0, 2.0, -1.0});
  CHECK(lo.values() == std::vector<double>{1.0, 5.0, 0.0, -1.0});
  // torch: where(A = B, dY/2, dY), zeroed where the operand loses
  const std::vector<Tensor> dmax = grad(
      std::vector<Tensor>{hi}, std::vector<Tensor>{a, b},
      std::vector<Tensor>{tensor({4.0, 4.0, 4.0, 4.0}, DType::Float64)}, {.retain_graph = true});
  CHECK(dmax[0].values() == std::vector<double>{0.0, 2.0, 4.0, 2.0});
  CHECK(dmax[1].values() == std::vector<double>{4.0, 2.0, 0.0, 2.0});
  tape.backward(sum(lo));  // the kernel backward: the same split
  CHECK(a.grad_values() == std::vector<double>{1.0, 0.5, 0.0, 0.5});
  CHECK(b.grad_values() == std::vector<double>{0.0, 0.5, 1.0, 0.5});
}

TEST_CASE("maximum, minimum: nan wins and passes the gradient to both, ±inf",
          "[maximum][minimum]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = requires_grad(tensor({NAN, 1.0, INFINITY}, DType::Float32));
  Tensor b = requires_grad(tensor({1.0, NAN, -INFINITY}, DType::Float32));
  Tensor y = maximum(a, b);
  CHECK(std::isnan(y.values()[0]));
  CHECK(std::isnan(y.values()[1]));
  CHECK(y.values()[2] == INFINITY);
  CHECK(minimum(a, b).values()[2] == -INFINITY);
  tape.backward(y, std::vector<double>{1.0, 1.0, 1.0});
  CHECK(a.grad_values() == std::vector<double>{1.0, 1.0, 1.0});
  CHECK(b.grad_values() == std::vector<double>{1.0, 1.0, 0.0});
}

TEST_CASE("maximum: broadcasting reduces each operand's gradient, empty tensors",
          "[maximum][minimum]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = requires_grad(tensor({{1.0, 5.0}, {3.0, 0.0}, {2.0, 2.0}}, DType::Float64));  // [3, 2]
  Tensor b = requires_grad(tensor({2.0, 1.0}, DType::Float64));                            // [2]
  Tensor y = maximum(a, b);
  CHECK(y.shape() == Shape{3, 2});
  CHECK(y.values() == std::vector<double>{2.0, 5.0, 3.0, 1.0, 2.0, 2.0});
  sum(y).backward();
  CHECK(a.grad_values() == std::vector<double>{0.0, 1.0, 1.0, 0.0, 0.5, 1.0});
  CHECK(b.grad_values() == std::vector<double>{1.5, 1.0});
  Tensor e = maximum(zeros(Shape{0, 2}, DType::Float64), b);
  CHECK(e.shape() == Shape{0, 2});
}

TEST_CASE("maximum, minimum: errors name the op and both operands", "[maximum][minimum][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  Tensor b = tensor({1.0, 2.0});
  b.set_name("b_vec");
  CHECK_THROWS_WITH(maximum(a, b), Catch::Contains("maximum") && Catch::Contains("[2, 3]") &&
                                       Catch::Contains("\"b_vec\" [2]") &&
                                       Catch::Contains("cannot broadcast"));
  CHECK_THROWS_WITH(minimum(a, tensor({1.0, 2.0, 3.0}, DType::Float64)),
                    Catch::Contains("minimum") && Catch::Contains("float64"));
}

TEST_CASE("maximum, minimum: match torch bit for bit, ties, nan and ±inf included",
          "[maximum][minimum][goldens]") {
  for (const char* suffix : {"", "_nan", "_same"}) {
    testing::check_binary_goldens(std::string("maximum") + suffix,
                                  [](const Tensor& a, const Tensor& b) { return maximum(a, b); });
    testing::check_binary_goldens(std::string("minimum") + suffix,
                                  [](const Tensor& a, const Tensor& b) { return minimum(a, b); });
  }
}

GRADCHECK_TEST_CASE("maximum", "broadcasting both ways, no ties") {
  for (const auto& [sa, sb] : testing::binary_gradcheck_shapes()) {
    INFO(sa.str() << " and " << sb.str());
    auto report =
        gradcheck("maximum", [](std::span<const Tensor> in) { return maximum(in[0], in[1]); },
                  {random_input(sa, 41, -2.0, 2.0), random_input(sb, 42, -2.0, 2.0)});
    testing::require_gradcheck(report, "maximum");
  }
}

GRADCHECK_TEST_CASE("minimum", "broadcasting both ways, no ties") {
  for (const auto& [sa, sb] : testing::binary_gradcheck_shapes()) {
    INFO(sa.str() << " and " << sb.str());
    auto report =
        gradcheck("minimum", [](std::span<const Tensor> in) { return minimum(in[0], in[1]); },
                  {random_input(sa, 43, -2.0, 2.0), random_input(sb, 44, -2.0, 2.0)});
    testing::require_gradcheck(report, "minimum");
  }
}
