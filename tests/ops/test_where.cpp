// Tests for ops/where.cpp.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

TEST_CASE("where: picks, broadcasts and routes the gradient", "[where]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor cond = from_values(Shape{2, 1}, std::vector<double>{1.0, 0.0}, DType::Float64);
  Tensor a = requires_grad(tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, DType::Float64));
  Tensor b = requires_grad(tensor({-1.0, -2.0, -3.0}, DType::Float64));  // [3]
  Tensor y = where(cond, a, b);
  CHECK(y.shape() == Shape{2, 3});
  CHECK(y.values() == std::vector<double>{1, 2, 3, -1, -2, -3});
  tape.backward(y, std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(a.grad_values() == std::vector<double>{1, 2, 3, 0, 0, 0});
  CHECK(b.grad_values() == std::vector<double>{4, 5, 6});  // summed over the broadcast dim
}

TEST_CASE("where: NaN in the condition counts as true, and errors", "[where]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK(where(tensor({NAN, 0.0}), tensor({1.0, 1.0}), tensor({2.0, 2.0})).values() ==
        std::vector<double>{1, 2});
  CHECK_THROWS_WITH(where(tensor({1.0, 0.0, 1.0}), tensor({1.0, 2.0}), tensor({3.0, 4.0})),
                    Catch::Contains("where") && Catch::Contains("cond [3]") &&
                        Catch::Contains("cannot broadcast"));
  CHECK_THROWS_WITH(where(tensor({1.0}), tensor({1.0}), tensor({1.0}, DType::Float64)),
                    Catch::Contains("where"));
}

TEST_CASE("where: matches torch.where bit for bit", "[where][goldens]") {
  const testing::GoldenFile golden("activations", "activations.txt");
  for (const auto& [tag, dtype] : {std::pair<std::string, DType>{"f32", DType::Float32},
                                   std::pair<std::string, DType>{"f64", DType::Float64}}) {
    Tape tape;
    TapeScope scope(tape);
    const std::string n = "where." + tag;
    const auto& gc = golden[n + ".cond"];
    const auto& ga = golden[n + ".a"];
    const auto& gb = golden[n + ".b"];
    Tensor cond = from_values(gc.shape, gc.values, dtype);
    Tensor a = from_values(ga.shape, ga.values, dtype, true);
    Tensor b = from_values(gb.shape, gb.values, dtype, true);
    Tensor y = where(cond, a, b);
    tape.backward(y, golden[n + ".dy"].values);
    CHECK(y.values() == golden[n + ".y"].values);
    CHECK(a.grad_values() == golden[n + ".da"].values);
    CHECK(b.grad_values() == golden[n + ".db"].values);
  }
}

GRADCHECK_TEST_CASE("where", "same shapes and broadcasting") {
  const std::vector<std::array<Shape, 3>> cases = {
      {Shape{2, 3}, Shape{2, 3}, Shape{2, 3}},
      {Shape{2, 1}, Shape{2, 3}, Shape{3}},
      {Shape{3}, Shape{2, 1, 3}, Shape{}},
      {Shape{2, 2, 3, 1}, Shape{1, 2, 1, 4}, Shape{2, 2, 3, 4}},
  };
  for (const auto& [cs, as, bs] : cases) {
    INFO(cs.str() << " " << as.str() << " " << bs.str());
    GradcheckInput cond = random_input(cs, 7, -1.0, 1.0);
    for (double& v : cond.values) v = v > 0 ? 1.0 : 0.0;
    cond.requires_grad = false;
    auto report =
        gradcheck("where", [](std::span<const Tensor> in) { return where(in[0], in[1], in[2]); },
                  {cond, random_input(as, 8), random_input(bs, 9)});
    testing::require_gradcheck(report, "where");
  }
}

TEST_CASE("where with a number for a branch: torch's values and gradients", "[where][goldens]") {
  const testing::GoldenFile golden("activations", "activations.txt");
  for (const auto& [tag, dtype] : {std::pair<std::string, DType>{"f32", DType::Float32},
                                   std::pair<std::string, DType>{"f64", DType::Float64}}) {
    for (const std::string side : {"other", "self"}) {
      Tape tape;
      TapeScope scope(tape);
      const std::string n = "where_scalar." + tag;
      INFO(n << " " << side);
      const auto& gc = golden[n + ".cond"];
      const auto& gx = golden[n + ".x"];
      const Tensor cond = from_values(gc.shape, gc.values, dtype);
      const Tensor x = from_values(gx.shape, gx.values, dtype, true);
      const Tensor y = side == "other" ? where(cond, x, 0.1) : where(cond, -0.1, x);
      const std::vector<double> want = golden[n + ".y_" + side].values, got = y.values();
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        CHECK((std::isnan(want[i]) ? std::isnan(got[i]) : got[i] == want[i]));
      }
      tape.backward(y, golden[n + ".dy"].values);
      CHECK(x.grad_values() == golden[n + ".dx_" + side].values);
    }
  }
  Tape tape;
  TapeScope scope(tape);
  const Tensor both = where(tensor({1.0, 0.0, 1.0}), 0.1, -2.5);
  CHECK(both.dtype() == DType::Float32);
  CHECK(both.values() == golden["where_scalar.both"].values);
}
