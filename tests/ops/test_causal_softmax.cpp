// Tests for ops/causal_softmax.cpp: equal to softmax(causal_mask(x) / c, -1), forward and backward.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/fused_compare.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;
using testing::max_abs_difference;
using testing::run_forward_backward;

namespace {
Tensor composed(const Tensor& x, double divisor) {
  return softmax(div_scalar(causal_mask(x), divisor), -1);
}
}  // namespace

TEST_CASE("causal_softmax: small exact case", "[causal_softmax]") {
  Tape tape;
  TapeScope scope(tape);
  // Row i spreads evenly over columns 0..i of equal scores; the rest is exactly 0.
  const std::vector<double> rows = causal_softmax(zeros({1, 3, 3}, DType::Float64)).values();
  CHECK(max_abs_difference(rows, {1, 0, 0, 0.5, 0.5, 0, 1 / 3.0, 1 / 3.0, 1 / 3.0}) < 1e-15);
  // Divided by 2 first: row 1 is softmax([ln 3, 0]) = [0.75, 0.25].
  Tensor x = tensor({{7.0, 100.0}, {2 * std::log(3.0), 0.0}}, DType::Float64);
  CHECK(max_abs_difference(causal_softmax(x, 2.0).values(), {1, 0, 0.75, 0.25}) < 1e-15);
}

TEST_CASE("causal_softmax: equals the composed ops, forward and backward, float32 and float64",
          "[causal_softmax]") {
  uint64_t seed = 70;
  for (const Shape& shape :
       {Shape{5, 5}, Shape{2, 3, 7, 7}, Shape{2, 4, 6}, Shape{2, 6, 4}, Shape{1, 2, 40, 40}}) {
    for (DType dtype : {DType::Float64, DType::Float32}) {
      INFO(shape.str() << " " << dtype_name(dtype));
      const auto x = random_input(shape, ++seed, -3.0, 3.0);
      const auto g = random_input(shape, ++seed);
      const double divisor = std::sqrt(5.0);
      auto fused = run_forward_backward(
          [&](std::span<const Tensor> in) { return causal_softmax(in[0], divisor); }, {x}, dtype,
          g.values);
      auto reference =
          run_forward_backward([&](std::span<const Tensor> in) { return composed(in[0], divisor); },
                               {x}, dtype, g.values);
      const double tol = dtype == DType::Float64 ? 1e-14 : 1e-6;
      CHECK(max_abs_difference(fused.value, reference.value) < tol);
      CHECK(max_abs_difference(fused.grads[0], reference.grads[0]) < tol);
    }
  }
}

TEST_CASE("causal_softmax: the same bits with 1 and 2 threads", "[causal_softmax][threads]") {
  const Shape shape{2, 4, 64, 64};  // enough rows to be split over the threads
  const auto x = random_input(shape, 91, -2.0, 2.0);
  const auto g = random_input(shape, 92);
  auto run = [&] {
    return run_forward_backward(
        [](std::span<const Tensor> in) { return causal_softmax(in[0], 8.0); }, {x}, DType::Float32,
        g.values);
  };
  set_num_threads(1);
  const auto one = run();
  set_num_threads(2);
  const auto two = run();
  const auto again = run();
  set_num_threads(1);
  CHECK(one.value == two.value);
  CHECK(one.grads == two.grads);
  CHECK(two.value == again.value);
  CHECK(two.grads == again.grads);
}

TEST_CASE("causal_softmax: errors name the op and the tensor", "[causal_softmax][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor v = zeros({3});
  v.set_name("scores");
  CHECK_THROWS_WITH(causal_softmax(v),
                    "causal_softmax: x \"scores\" [3]: expected at least 2 dims [.., Tq, Tk]");
  CHECK_THROWS_WITH(
      causal_softmax(zeros({2, 2}), 0.0),
      Catch::Contains("causal_softmax: x [2, 2]: divisor must be finite and nonzero"));
  CHECK(tape.size() == 2);  // nothing recorded by the failed calls
}

GRADCHECK_TEST_CASE("causal_softmax", "ranks 2-4, square and not, with a divisor") {
  uint64_t seed = 80;
  for (const Shape& shape :
       {Shape{4, 4}, Shape{3, 5}, Shape{5, 3}, Shape{2, 3, 3}, Shape{2, 2, 4, 4}}) {
    INFO(shape.str());
    auto report = gradcheck("causal_softmax",
                            [](std::span<const Tensor> in) { return causal_softmax(in[0], 1.5); },
                            {random_input(shape, ++seed, -2.0, 2.0)});
    testing::require_gradcheck(report, "causal_softmax");
  }
}
