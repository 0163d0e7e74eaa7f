// Tests for ops/rms_norm.cpp.
#include <cmath>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

namespace test_rms_norm {

Tensor golden_leaf(const testing::GoldenFile& golden, const std::string& name, DType dtype) {
  const auto& g = golden[name];
  return from_values(g.shape, g.values, dtype, true);
}

}  // namespace test_rms_norm

TEST_CASE("rms_norm: small exact cases", "[rms_norm]") {
  Tape tape;
  TapeScope scope(tape);
  // Row [4, 4, 4, -4]: mean of squares 16, so r = 1/4; row [0.5, -0.5, 0.5, 0.5]: r = 2.
  Tensor x = tensor({{4.0, 4.0, 4.0, -4.0}, {0.5, -0.5, 0.5, 0.5}}, DType::Float64);
  CHECK(rms_norm(x, Tensor(), Tensor(), 0.0).values() ==
        std::vector<double>{1, 1, 1, -1, 1, -1, 1, 1});
  Tensor w = tensor({2.0, 1.0, 1.0, 0.5}, DType::Float64);
  Tensor b = tensor({0.0, 0.0, 1.0, 0.0}, DType::Float64);
  CHECK(rms_norm(x, w, b, 0.0).values() == std::vector<double>{2, 1, 2, -0.5, 2, -1, 2, 0.5});
  // eps is added to the mean of squares: 16 + 48 = 64, r = 1/8.
  CHECK(rms_norm(x, Tensor(), Tensor(), 48.0).values()[0] == 0.5);
  // A zero row stays zero (eps keeps r finite).
  CHECK(rms_norm(tensor({0.0, 0.0}, DType::Float64), Tensor(), Tensor(), 1e-6).values() ==
        std::vector<double>{0, 0});
}

TEST_CASE("rms_norm: forward and gradients match the book's RMSNorm under torch",
          "[rms_norm][goldens]") {
  using test_rms_norm::golden_leaf;
  const testing::GoldenFile golden("qwen3", "qwen3.txt");
  SECTION("float64 with scale and shift (bias=True), rank 3") {
    Tape tape;
    TapeScope scope(tape);
    Tensor x = golden_leaf(golden, "rms_norm.f64.x", DType::Float64);
    Tensor w = golden_leaf(golden, "rms_norm.f64.scale", DType::Float64);
    Tensor b = golden_leaf(golden, "rms_norm.f64.shift", DType::Float64);
    Tensor y = rms_norm(x, w, b, 1e-6);
    testing::require_near(y.values(), golden["rms_norm.f64.y"], DType::Float64, 8, "y");
    tape.backward(y, golden["rms_norm.f64.dy"].values);
    testing::require_near(x.grad_values(), golden["rms_norm.f64.dx"], DType::Float64, 16, "dx");
    testing::require_near(w.grad_values(), golden["rms_norm.f64.dscale"], DType::Float64, 16,
                          "dscale");
    testing::require_near(b.grad_values(), golden["rms_norm.f64.dshift"], DType::Float64, 8,
                          "dshift");
  }
  SECTION("float32, Qwen3's RMSNorm (scale only, eps 1e-6)") {
    Tape tape;
    TapeScope scope(tape);
    Tensor x = golden_leaf(golden, "rms_norm.f32.x", DType::Float32);
    Tensor w = golden_leaf(golden, "rms_norm.f32.scale", DType::Float32);
    Tensor y = rms_norm(x, w, Tensor(), 1e-6);
    CHECK(y.dtype() == DType::Float32);
    const int64_t equal =
        testing::require_near(y.values(), golden["rms_norm.f32.y"], DType::Float32, 2, "y");
    CHECK(equal > 0);
    tape.backward(y, golden["rms_norm.f32.dy"].values);
    testing::require_near(x.grad_values(), golden["rms_norm.f32.dx"], DType::Float32, 8, "dx");
    testing::require_near(w.grad_values(), golden["rms_norm.f32.dscale"], DType::Float32, 8,
                          "dscale");
  }
}

TEST_CASE("rms_norm: equals its composite form", "[rms_norm]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = from_values({3, 5}, random_input({3, 5}, 4, -3.0, 3.0).values, DType::Float64);
  Tensor w = from_values({5}, random_input({5}, 5).values, DType::Float64);
  const Tensor composite = mul(mul(x, rsqrt(mean(mul(x, x), -1, true) + 1e-3)), w);
  const std::vector<double> fused = rms_norm(x, w, Tensor(), 1e-3).values();
  const std::vector<double> composed = composite.values();
  REQUIRE(fused.size() == composed.size());
  for (size_t i = 0; i < fused.size(); ++i) CHECK(fused[i] == Approx(composed[i]).epsilon(1e-14));
}

TEST_CASE("rms_norm: bad weight, bias, rank and eps are named", "[rms_norm][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 4});
  Tensor w = ones({3});
  w.set_name("norm.scale");
  CHECK_THROWS_WITH(rms_norm(x, w, Tensor()),
                    "rms_norm: x [2, 4] and weight \"norm.scale\" [3]: weight must have shape [4] "
                    "(the last dim of x)");
  CHECK_THROWS_WITH(rms_norm(x, ones({4}), zeros({1, 4})),
                    "rms_norm: x [2, 4] and bias [1, 4]: bias must have shape [4] (the last dim "
                    "of x)");
  CHECK_THROWS_WITH(rms_norm(x, ones({4}, DType::Float64), Tensor()),
                    Catch::Contains("rms_norm") && Catch::Contains("float64"));
  CHECK_THROWS_WITH(rms_norm(scalar(1.0), Tensor(), Tensor()),
                    "rms_norm: x []: expected at least one dim");
  const int32_t before = tape.size();
  CHECK_THROWS_WITH(rms_norm(x, Tensor(), Tensor(), -1.0),
                    "rms_norm: x [2, 4]: eps must be >= 0, got -1");
  CHECK(tape.size() == before);  // nothing recorded
}

GRADCHECK_TEST_CASE("rms_norm", "x alone and with scale and shift, ranks 1-4") {
  for (Shape shape : {Shape{4}, Shape{3, 4}, Shape{2, 3, 4}, Shape{2, 2, 1, 4}}) {
    INFO("x " << shape.str());
    const Shape c{shape[shape.rank() - 1]};
    auto alone = gradcheck(
        "rms_norm", [](std::span<const Tensor> in) { return rms_norm(in[0], Tensor(), Tensor()); },
        {random_input(shape, 61, -2.0, 2.0)});
    testing::require_gradcheck(alone, "rms_norm");
    auto both = gradcheck(
        "rms_norm", [](std::span<const Tensor> in) { return rms_norm(in[0], in[1], in[2], 1e-3); },
        {random_input(shape, 62, -2.0, 2.0), random_input(c, 63), random_input(c, 64)});
    testing::require_gradcheck(both, "rms_norm");
  }
}
