// Tests for ops/interpolate_backward.cpp: interpolate's adjoint, which a gradient recorded with
// create_graph holds: its values against the kernel backward's, and float64 gradient checks.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include <tapegrad/ops/pooling.h>
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

namespace test_interpolate_backward {

// dL/dx of L = Σ interpolate(x) ⊙ v, recorded: interpolate_backward(v).
Tensor recorded_adjoint(const InterpolateOptions& o, const Shape& x_shape, const Tensor& v) {
  const Tensor x = requires_grad(zeros(x_shape, DType::Float64));
  const Tensor y = interpolate(x, o);
  return grad(std::vector<Tensor>{y}, std::vector<Tensor>{x}, std::vector<Tensor>{v},
              {.create_graph = true})[0];
}

}  // namespace test_interpolate_backward

TEST_CASE("interpolate_backward: a recorded gradient equals the kernel backward's",
          "[interpolate_backward]") {
  Tape tape;
  TapeScope scope(tape);
  const InterpolateOptions o{.size = Size2{5, 3}, .mode = InterpolateMode::Bilinear};
  const Tensor v = from_values({1, 2, 5, 3}, random_input({1, 2, 5, 3}, 3).values, DType::Float64);
  const Tensor x = requires_grad(zeros({1, 2, 3, 4}, DType::Float64));
  tape.backward(sum(interpolate(x, o) * v), {.retain_graph = true});
  const Tensor dx = test_interpolate_backward::recorded_adjoint(o, {1, 2, 3, 4}, v);
  CHECK(dx.node().op_name() == std::string("interpolate_backward"));
  CHECK(dx.values() == x.grad_values());
}

GRADCHECK_TEST_CASE("interpolate_backward", "nearest and bilinear") {
  using test_interpolate_backward::recorded_adjoint;
  for (const InterpolateOptions& o :
       {InterpolateOptions{.size = Size2{5, 3}},
        InterpolateOptions{.size = Size2{5, 3}, .mode = InterpolateMode::Bilinear}}) {
    auto report = gradcheck("interpolate_backward",
                            [&](std::span<const Tensor> in) {
                              return recorded_adjoint(o, {1, 2, 3, 4}, in[0]);
                            },
                            {random_input({1, 2, 5, 3}, 17)});
    testing::require_gradcheck(report, "interpolate_backward");
  }
}
