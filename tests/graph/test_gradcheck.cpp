// Tests for graph/gradcheck.cpp: it passes correct backwards and catches a wrong one.
#include <tapegrad/graph/gradcheck.h>

#include <catch2/catch.hpp>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/ops.h>

using namespace tapegrad;

namespace {

// A test-only op, y = x², whose backward is deliberately wrong at one element.
void bad_square_backward(Tape& tape, const Node& node) {
  // y = x²  =>  dx += 2x·dy, except element 2 gets 3x·dy (the planted bug)
  const Node& x = tape.input(node, 0);
  if (double* d = tape.input_grad<double>(node, 0).to_add()) {
    for (int64_t i = 0; i < x.shape.numel(); ++i) {
      d[i] += (i == 2 ? 3.0 : 2.0) * x.value_as<double>()[i] * node.grad_as<double>()[i];
    }
  }
}
const OpDef kBadSquare{"bad_square", bad_square_backward};

Tensor bad_square(const Tensor& x) {
  Tensor y = x.tape().record(kBadSquare, x.shape(), x.dtype(), {x});
  array_of<double>(y.node()) = array_of<double>(x.node()).square();
  return y;
}

}  // namespace

TEST_CASE("gradcheck: a correct backward passes", "[gradcheck]") {
  auto report = gradcheck("matmul then sum",
                          [](std::span<const Tensor> in) { return sum(matmul(in[0], in[1])); },
                          {random_input({3, 4}, 1), random_input({4, 2}, 2)});
  INFO(report.message);
  CHECK(report.passed);
  CHECK(report.checked == 3 * 4 + 4 * 2);
}

TEST_CASE("gradcheck: a wrong derivative fails and the worst element is reported", "[gradcheck]") {
  GradcheckInput x = random_input({5}, 7, 0.5, 1.0);
  auto report =
      gradcheck("bad_square", [](std::span<const Tensor> in) { return bad_square(in[0]); }, {x});
  INFO(report.message);
  CHECK_FALSE(report.passed);
  CHECK(report.function == "bad_square");
  CHECK(report.input == 0);
  CHECK(report.element == 2);
  CHECK(report.output_element == 2);
  CHECK(report.numeric == Approx(2 * x.values[2]).epsilon(1e-6));
  CHECK(report.analytic == Approx(3 * x.values[2]).epsilon(1e-12));
  CHECK_THAT(report.message, Catch::Contains("FAILED") && Catch::Contains("element 2"));
}

TEST_CASE("gradcheck: fast mode passes a correct backward and fails a wrong one", "[gradcheck]") {
  GradcheckOptions fast;
  fast.fast_mode = true;
  auto good = gradcheck(
      "matmul", [](std::span<const Tensor> in) { return matmul(in[0], in[1]); },
      {random_input({6, 5}, 1), random_input({5, 7}, 2)}, fast);
  INFO(good.message);
  CHECK(good.passed);
  CHECK(good.checked == 2);
  auto bad = gradcheck(
      "bad_square", [](std::span<const Tensor> in) { return bad_square(in[0]); },
      {random_input({5}, 7, 0.5, 1.0)}, fast);
  CHECK_FALSE(bad.passed);
}

TEST_CASE("gradcheck: parameters are restored exactly after the check", "[gradcheck]") {
  Parameter w =
      Parameter::from_values({2, 2}, std::vector<double>{0.1, 0.2, 0.3, 0.4}, DType::Float64, "w");
  const std::vector<double> before = w.values();
  auto report = gradcheck_parameters("w", [&] { return matmul(w, w); }, {w});
  CHECK(report.passed);
  CHECK(w.values() == before);
  CHECK(w.grad_values() == std::vector<double>(4, 0.0));
}
