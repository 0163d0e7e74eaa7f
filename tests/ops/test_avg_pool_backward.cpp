// Tests for ops/avg_pool_backward.cpp: the average poolings' adjoint, which a gradient recorded
// with create_graph holds: its values against the kernel backward's, and float64 gradient checks.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include <tapegrad/ops/pooling.h>
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

namespace test_avg_pool_backward {

// dL/dx of L = Σ pool(x) ⊙ v, recorded: avg_pool_backward(v).
Tensor recorded_adjoint(const std::function<Tensor(const Tensor&)>& pool, const Shape& x_shape,
                        const Tensor& v) {
  const Tensor x = requires_grad(zeros(x_shape, DType::Float64));
  const Tensor y = pool(x);
  return grad(std::vector<Tensor>{y}, std::vector<Tensor>{x}, std::vector<Tensor>{v},
              {.create_graph = true})[0];
}

}  // namespace test_avg_pool_backward

TEST_CASE("avg_pool_backward: a recorded gradient equals the kernel backward's",
          "[avg_pool_backward]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor v = from_values({1, 2, 3, 4}, random_input({1, 2, 3, 4}, 3).values, DType::Float64);
  const Tensor x = requires_grad(zeros({1, 2, 5, 6}, DType::Float64));
  const Tensor y = avg_pool2d(x, 3, 2, 1, true, false);
  tape.backward(sum(y * v), {.retain_graph = true});
  const Tensor dx = test_avg_pool_backward::recorded_adjoint(
      [](const Tensor& t) { return avg_pool2d(t, 3, 2, 1, true, false); }, {1, 2, 5, 6}, v);
  CHECK(dx.node().op_name() == std::string("avg_pool_backward"));
  CHECK(dx.values() == x.grad_values());
}

GRADCHECK_TEST_CASE("avg_pool_backward", "of avg_pool2d, avg_pool1d and adaptive_avg_pool2d") {
  using test_avg_pool_backward::recorded_adjoint;
  auto report =
      gradcheck("avg_pool_backward",
                [](std::span<const Tensor> in) {
                  return recorded_adjoint([](const Tensor& t) { return avg_pool2d(t, 3, 2, 1); },
                                          {1, 2, 5, 6}, in[0]);
                },
                {random_input({1, 2, 3, 3}, 13)});
  testing::require_gradcheck(report, "avg_pool_backward");
  report = gradcheck("avg_pool_backward",
                     [](std::span<const Tensor> in) {
                       return recorded_adjoint(
                           [](const Tensor& t) { return avg_pool1d(t, 2, 1, 1); }, {2, 5}, in[0]);
                     },
                     {random_input({2, 6}, 14)});
  testing::require_gradcheck(report, "avg_pool_backward");
  report = gradcheck("avg_pool_backward",
                     [](std::span<const Tensor> in) {
                       return recorded_adjoint(
                           [](const Tensor& t) {
                             return adaptive_avg_pool2d(t, {2, 3});
                           },
                           {1, 2, 3, 5}, in[0]);
                     },
                     {random_input({1, 2, 2, 3}, 15)});
  testing::require_gradcheck(report, "avg_pool_backward");
}
