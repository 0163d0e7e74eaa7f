// Tests for ops/avg_pool2d.cpp: torch 1.13's goldens, the errors and a float64 gradient check.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/pooling.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/pool_goldens.h"

using namespace tapegrad;

TEST_CASE(
    "avg_pool2d: torch goldens (stride, padding, count_include_pad, ceil_mode, divisor_override, "
    "unbatched)",
    "[avg_pool2d][goldens]") {
  using testing::check_pool_case;
  check_pool_case("avg_pool2d.k2", [](const Tensor& x) { return avg_pool2d(x, 2); });
  check_pool_case("avg_pool2d.k3s2p1", [](const Tensor& x) { return avg_pool2d(x, 3, 2, 1); });
  check_pool_case("avg_pool2d.exclude_pad", [](const Tensor& x) {
    return avg_pool2d(x, {3, 2}, Size2{2, 1}, {1, 1}, false, false);
  });
  check_pool_case("avg_pool2d.ceil", [](const Tensor& x) { return avg_pool2d(x, 3, 2, 1, true); });
  check_pool_case("avg_pool2d.ceil_exclude",
                  [](const Tensor& x) { return avg_pool2d(x, 3, 2, 1, true, false); });
  check_pool_case("avg_pool2d.divisor",
                  [](const Tensor& x) { return avg_pool2d(x, 3, 2, 1, false, true, 5); });
  check_pool_case("avg_pool2d.unbatched", [](const Tensor& x) { return avg_pool2d(x, 2, 1); });
}

TEST_CASE("avg_pool2d: errors name the argument and the shapes", "[avg_pool2d][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros({1, 1, 2, 2});
  CHECK_THROWS_WITH(avg_pool2d(x, 3),
                    "avg_pool2d: x [1, 1, 2, 2]: kernel_size [3, 3] is larger than the input "
                    "[2, 2] with padding [0, 0]: the output size would be [0, 0]");
  CHECK_THROWS_WITH(avg_pool2d(x, 2, 1, {0, 2}),
                    "avg_pool2d: x [1, 1, 2, 2]: padding [0, 2] is more than half of "
                    "kernel_size [2, 2]");
  CHECK_THROWS_WITH(avg_pool2d(x, 2, std::nullopt, 0, false, true, 0),
                    "avg_pool2d: x [1, 1, 2, 2]: divisor_override must not be 0");
  // ceil mode: the last window runs past the input and is divided by its part inside the padded
  // input (torch: 1.5).
  const Tensor y =
      avg_pool2d(from_values({1, 1, 2, 2}, std::vector<double>{0, 1, 2, 3}), 3, 3, 0, true);
  CHECK(y.values() == std::vector<double>{1.5});
}

GRADCHECK_TEST_CASE("avg_pool2d", "padding, count_include_pad, ceil mode, divisor_override") {
  const auto check = [](const Shape& shape, const std::function<Tensor(const Tensor&)>& f) {
    auto report = gradcheck("avg_pool2d", [&](std::span<const Tensor> in) { return f(in[0]); },
                            {random_input(shape, 31)});
    testing::require_gradcheck(report, "avg_pool2d");
  };
  check({2, 2, 5, 6}, [](const Tensor& x) { return avg_pool2d(x, 2); });
  check({1, 2, 6, 5}, [](const Tensor& x) { return avg_pool2d(x, 3, 2, 1, true, false); });
  check({1, 1, 7, 6}, [](const Tensor& x) { return avg_pool2d(x, {3, 2}, Size2{2, 1}, 1, true); });
  check({2, 4, 4}, [](const Tensor& x) { return avg_pool2d(x, 3, 1, 1, false, true, 4); });
}
