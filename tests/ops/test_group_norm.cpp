// Tests for ops/group_norm.cpp.
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

TEST_CASE("group_norm: forward and gradients match torch, float32 and float64",
          "[group_norm][goldens]") {
  const testing::GoldenFile golden("norms", "norms.txt");
  struct Case {
    std::string name;
    int64_t groups;
    double eps;
  };
  const std::vector<Case> cases = {
      {"g3_affine", 3, 1e-5}, {"g2_plain", 2, 1e-5}, {"rank2_g2", 2, 1e-5}, {"g1_eps", 1, 1e-3}};
  for (const Case& c : cases) {
    for (const auto& [tag, dtype] : {std::pair<std::string, DType>{"f32", DType::Float32},
                                     std::pair<std::string, DType>{"f64", DType::Float64}}) {
      const std::string key = "group_norm." + c.name + "." + tag;
      INFO(key);
      Tape tape;
      TapeScope scope(tape);
      const auto& gx = golden[key + ".x"];
      Tensor x = from_values(gx.shape, gx.values, dtype, true);
      Tensor w, b;
      const bool affine = golden.contains(key + ".w");
      if (affine) {
        w = from_values(golden[key + ".w"].shape, golden[key + ".w"].values, dtype, true);
        b = from_values(golden[key + ".b"].shape, golden[key + ".b"].values, dtype, true);
      }
      Tensor y = group_norm(x, c.groups, w, b, c.eps);
      tape.backward(y, golden[key + ".dy"].values);
      // Torch sums a group in another order: a few dozen ulps of the values' scale.
      const double ulps = 64;
      testing::require_near(y.values(), golden[key + ".y"], dtype, ulps, key + ".y");
      testing::require_near(x.grad_values(), golden[key + ".dx"], dtype, ulps, key + ".dx");
      if (affine) {
        testing::require_near(w.grad_values(), golden[key + ".dw"], dtype, ulps, key + ".dw");
        testing::require_near(b.grad_values(), golden[key + ".db"], dtype, ulps, key + ".db");
      }
    }
  }
}

TEST_CASE("group_norm: gradcheck and gradgradcheck in float64", "[group_norm][grad]") {
  auto f = [](std::span<const Tensor> in) { return group_norm(in[0], 2, in[1], in[2], 1e-5); };
  const std::vector<GradcheckInput> inputs = {random_input({2, 4, 3}, 51, -2.0, 2.0),
                                              random_input({4}, 52), random_input({4}, 53)};
  // A composite: the checks record its ops (layer_norm, mul, add, reshape).
  testing::require_gradcheck(gradcheck("group_norm", f, inputs), "layer_norm");
  testing::require_gradcheck(gradgradcheck("group_norm", f, inputs), "layer_norm");
}

TEST_CASE("group_norm: bad arguments are Errors naming the op, the argument and the shapes",
          "[group_norm][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 6, 4});
  CHECK_THROWS_WITH(group_norm(x, 4), Catch::Contains("group_norm") &&
                                          Catch::Contains("num_groups 4") &&
                                          Catch::Contains("[2, 6, 4]"));
  CHECK_THROWS_WITH(group_norm(x, 0), Catch::Contains("num_groups 0"));
  CHECK_THROWS_WITH(group_norm(zeros({6}), 2), Catch::Contains("[N, C, *]"));
  CHECK_THROWS_WITH(group_norm(x, 3, zeros({5})),
                    Catch::Contains("weight must be [C] = [6]") && Catch::Contains("[5]"));
  CHECK_THROWS_WITH(group_norm(x, 3, Tensor(), zeros({6, 1})), Catch::Contains("bias must be"));
  CHECK_THROWS_WITH(group_norm(x, 3, zeros({6}, DType::Float64)), Catch::Contains("float64"));
  CHECK_THROWS_WITH(group_norm(x, 3, Tensor(), Tensor(), -1.0), Catch::Contains("eps"));
}

TEST_CASE("group_norm: an empty batch gives an empty result", "[group_norm]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK(group_norm(zeros({0, 4, 3}), 2).shape() == Shape{0, 4, 3});
}
