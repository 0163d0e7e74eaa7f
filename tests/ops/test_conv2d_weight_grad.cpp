// Tests for ops/conv2d_weight_grad.cpp: the op conv2d's recorded backward uses for the weight,
// its own gradients checked in float64, and the same bits as conv2d's kernel backward.
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

GRADCHECK_TEST_CASE("conv2d_weight_grad", "conv2d's weight gradient recorded, then checked") {
  // conv2d_weight_grad is what create_graph records for conv2d's weight: its own gradients are
  // checked through a recorded backward, w.r.t. dY and X.
  using S = std::span<const Tensor>;
  const GradcheckReport report =
      gradcheck("conv2d_weight_grad",
                [](S in) {
                  const Tensor w = from_values({2, 2, 2, 2}, random_input({2, 2, 2, 2}, 51).values,
                                               DType::Float64, true);
                  const Tensor y = conv2d(in[0], w, Tensor(), 2, 1, 1, 1);
                  return grad(std::vector<Tensor>{y}, std::vector<Tensor>{w},
                              std::vector<Tensor>{in[1]}, {.create_graph = true})[0];
                },
                {random_input({1, 2, 4, 5}, 52), random_input({1, 2, 3, 3}, 53)});
  testing::require_gradcheck(report, "conv2d_weight_grad");
}

TEST_CASE(
    "conv2d_weight_grad: the recorded weight gradient is the kernel backward's, at any "
    "thread count",
    "[conv2d_weight_grad]") {
  // Both run conv2d_backward_weight; the images are summed in order and each GEMM element by one
  // thread, so the bits do not depend on the thread count.
  const int threads = num_threads();
  std::vector<std::vector<double>> results;
  for (int n : {1, 2}) {
    set_num_threads(n);
    Tape tape;
    TapeScope scope(tape);
    manual_seed(5);
    const Tensor x = rand({2, 16, 12, 12});
    const Tensor w = requires_grad(rand({32, 16, 3, 3}));
    const Tensor y = conv2d(x, w, Tensor(), 1, 1);
    const Tensor dy = rand(y.shape());
    const Tensor recorded = grad(std::vector<Tensor>{y}, std::vector<Tensor>{w},
                                 std::vector<Tensor>{dy}, {.create_graph = true})[0];
    tape.backward(y, dy.values());
    CHECK(recorded.values() == w.grad_values());
    results.push_back(recorded.values());
  }
  set_num_threads(threads);
  CHECK(results[0] == results[1]);
}
