// Tests for ops/lerp.cpp: torch.lerp with a scalar or a tensor weight, values and gradients.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise3_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("lerp: torch goldens, scalar weights on both sides of 0.5 and a broadcast tensor weight",
          "[lerp][goldens]") {
  for (const double w : {0.3, 0.5, 0.7, -0.6, 1.5}) {
    std::string name = "lerp_scalar_" + std::to_string(w);
    name = name.substr(0, name.find_last_not_of('0') + 1);  // "lerp_scalar_0.3", as Python
    testing::check_elementwise3(
        name, {"a", "b"}, [w](const std::vector<Tensor>& x) { return lerp(x[0], x[1], w); }, true);
  }
  // The broadcast operands' gradients sum 8 terms each, in tapegrad's order where torch's
  // reduction kernel takes its own: the last bits may differ.
  testing::check_elementwise3(
      "lerp_tensor", {"a", "b", "w"},
      [](const std::vector<Tensor>& x) { return lerp(x[0], x[1], x[2]); }, true, 4);
}

TEST_CASE("lerp: shapes and dtypes must agree", "[lerp][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor a = zeros({2, 3});
  CHECK_THROWS_WITH(lerp(a, zeros({4}), 0.5),
                    Catch::StartsWith("lerp: a [2, 3] and b [4]: cannot broadcast"));
  CHECK_THROWS_WITH(lerp(a, zeros({3}), zeros({4})),
                    "lerp: a [2, 3] and b [3]: cannot broadcast with weight [4]");
  CHECK_THROWS_WITH(lerp(a, zeros({3}, DType::Float64), 0.5),
                    Catch::Contains("is float32 but b [3] is float64"));
  CHECK_THROWS_WITH(lerp(a, a, std::nan("")), Catch::StartsWith("lerp: "));
}

GRADCHECK_TEST_CASE("lerp_scalar", "weights below and above 0.5, broadcast") {
  for (const double w : {0.25, 0.8}) {
    auto report =
        gradcheck("lerp_scalar", [w](std::span<const Tensor> in) { return lerp(in[0], in[1], w); },
                  {random_input({2, 3}, 1), random_input({3}, 2)});
    testing::require_gradcheck(report, "lerp_scalar");
  }
}

GRADCHECK_TEST_CASE("lerp", "a broadcast tensor weight") {
  auto report =
      gradcheck("lerp", [](std::span<const Tensor> in) { return lerp(in[0], in[1], in[2]); },
                {random_input({2, 3}, 3), random_input({2, 1}, 4), random_input({3}, 5)});
  testing::require_gradcheck(report, "lerp");
}
