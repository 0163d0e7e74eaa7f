// Tests for ops/layer_norm.cpp.
#include <cmath>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/fused_compare.h"
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

TEST_CASE("layer_norm: small exact cases", "[layer_norm]") {
  Tape tape;
  TapeScope scope(tape);
  // Rows [1, 3] and [-4, -2]: biased variance 1, so each normalises to [-1, 1].
  Tensor x = tensor({{1.0, 3.0}, {-4.0, -2.0}}, DType::Float64);
  CHECK(layer_norm(x, Tensor(), Tensor(), 0.0).values() == std::vector<double>{-1, 1, -1, 1});
  Tensor w = tensor({2.0, 3.0}, DType::Float64);
  Tensor b = tensor({0.5, -0.5}, DType::Float64);
  CHECK(layer_norm(x, w, b, 0.0).values() == std::vector<double>{-1.5, 2.5, -1.5, 2.5});
  CHECK(layer_norm(x, w, Tensor(), 0.0).values() == std::vector<double>{-2, 3, -2, 3});
  CHECK(layer_norm(x, Tensor(), b, 0.0).values() == std::vector<double>{-0.5, 0.5, -0.5, 0.5});
  // eps 3 with variance 1: rstd ½.
  CHECK(layer_norm(x, Tensor(), Tensor(), 3.0).values() ==
        std::vector<double>{-0.5, 0.5, -0.5, 0.5});
  // A constant row normalises to 0 (then the bias).
  CHECK(layer_norm(tensor({5.0, 5.0}, DType::Float64), Tensor(), b).values() ==
        std::vector<double>{0.5, -0.5});
}

TEST_CASE("layer_norm: forward and gradients match PyTorch", "[layer_norm][golden]") {
  const testing::GoldenFile golden("reductions", "layer_norm.txt");
  SECTION("with weight and bias, rank 3") {
    Tape tape;
    TapeScope scope(tape);
    auto leaf = [&](const char* name) {
      const auto& g = golden[std::string("affine.") + name];
      return from_values(g.shape, g.values, DType::Float64, true);
    };
    Tensor x = leaf("x"), w = leaf("weight"), b = leaf("bias");
    Tensor y = layer_norm(x, w, b, golden["affine.eps"].values[0]);
    testing::require_close(y.values(), golden["affine.y"], 1e-12, "y");
    tape.backward(y, golden["affine.dy"].values);
    testing::require_close(x.grad_values(), golden["affine.dx"], 1e-12, "dx");
    testing::require_close(w.grad_values(), golden["affine.dweight"], 1e-12, "dweight");
    testing::require_close(b.grad_values(), golden["affine.dbias"], 1e-12, "dbias");
  }
  SECTION("float32: within float32 rounding of torch's float64 values") {
    Tape tape;
    TapeScope scope(tape);
    auto leaf = [&](const char* name) {
      const auto& g = golden[std::string("affine.") + name];
      return from_values(g.shape, g.values, DType::Float32, true);
    };
    Tensor x = leaf("x"), w = leaf("weight"), b = leaf("bias");
    Tensor y = layer_norm(x, w, b, golden["affine.eps"].values[0]);
    CHECK(y.dtype() == DType::Float32);
    testing::require_close(y.values(), golden["affine.y"], 1e-5, "y");
    tape.backward(y, golden["affine.dy"].values);
    testing::require_close(x.grad_values(), golden["affine.dx"], 1e-5, "dx");
    testing::require_close(w.grad_values(), golden["affine.dweight"], 1e-5, "dweight");
    testing::require_close(b.grad_values(), golden["affine.dbias"], 1e-5, "dbias");
  }
  SECTION("without weight and bias, rank 2, large mean") {
    Tape tape;
    TapeScope scope(tape);
    Tensor x = from_values(golden["plain.x"].shape, golden["plain.x"].values, DType::Float64, true);
    Tensor y = layer_norm(x, Tensor(), Tensor(), golden["plain.eps"].values[0]);
    testing::require_close(y.values(), golden["plain.y"], 1e-12, "y");
    tape.backward(y, golden["plain.dy"].values);
    testing::require_close(x.grad_values(), golden["plain.dx"], 1e-12, "dx");
  }
}

TEST_CASE("layer_norm: weight and bias must be [C]", "[layer_norm][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 4});
  Tensor w = ones({3});
  w.set_name("ln.scale");
  CHECK_THROWS_WITH(layer_norm(x, w, Tensor()),
                    "layer_norm: x [2, 4] and weight \"ln.scale\" [3]: weight must have shape [4] "
                    "(the last dim of x)");
  CHECK_THROWS_WITH(layer_norm(x, ones({4}), zeros({1, 4})),
                    "layer_norm: x [2, 4] and bias [1, 4]: bias must have shape [4] (the last dim "
                    "of x)");
  CHECK_THROWS_WITH(layer_norm(x, ones({4}, DType::Float64), Tensor()),
                    Catch::Contains("layer_norm") && Catch::Contains("float64"));
  CHECK_THROWS_WITH(layer_norm(scalar(1.0), Tensor(), Tensor()),
                    "layer_norm: x []: expected at least one dim");
}

TEST_CASE("layer_norm: eps must be >= 0", "[layer_norm][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 4});
  const int32_t before = tape.size();
  CHECK_THROWS_WITH(layer_norm(x, Tensor(), Tensor(), -1e-5),
                    "layer_norm: x [2, 4]: eps must be >= 0, got -1e-05");
  CHECK_THROWS_WITH(layer_norm(x, Tensor(), Tensor(), std::nan("")),
                    "layer_norm: x [2, 4]: eps must be >= 0, got nan");
  CHECK(tape.size() == before);  // nothing recorded
  // The result first: recording may grow the tape's node vector, which moves x's shape.
  const Tensor y = layer_norm(x, Tensor(), Tensor(), 0.0);
  CHECK(y.shape() == x.shape());
}

GRADCHECK_TEST_CASE("layer_norm", "x alone, ranks 1-4") {
  for (Shape shape : {Shape{5}, Shape{3, 4}, Shape{2, 3, 4}, Shape{2, 1, 3, 3}}) {
    INFO("x " << shape.str());
    auto report =
        gradcheck("layer_norm",
                  [](std::span<const Tensor> in) { return layer_norm(in[0], Tensor(), Tensor()); },
                  {random_input(shape, 51, -2.0, 2.0)});
    testing::require_gradcheck(report, "layer_norm");
  }
}

GRADCHECK_TEST_CASE("layer_norm", "with weight and/or bias, ranks 1-4") {
  for (Shape shape : {Shape{4}, Shape{3, 4}, Shape{2, 3, 4}, Shape{2, 2, 1, 4}}) {
    INFO("x " << shape.str());
    const Shape c{shape[shape.rank() - 1]};
    auto both =
        gradcheck("layer_norm",
                  [](std::span<const Tensor> in) { return layer_norm(in[0], in[1], in[2], 1e-3); },
                  {random_input(shape, 52, -2.0, 2.0), random_input(c, 53), random_input(c, 54)});
    testing::require_gradcheck(both, "layer_norm");
    auto weight_only = gradcheck(
        "layer_norm", [](std::span<const Tensor> in) { return layer_norm(in[0], in[1], Tensor()); },
        {random_input(shape, 55, -2.0, 2.0), random_input(c, 56)});
    testing::require_gradcheck(weight_only, "layer_norm");
    auto bias_only = gradcheck(
        "layer_norm", [](std::span<const Tensor> in) { return layer_norm(in[0], Tensor(), in[1]); },
        {random_input(shape, 57, -2.0, 2.0), random_input(c, 58)});
    testing::require_gradcheck(bias_only, "layer_norm");
  }
}

TEST_CASE("layer_norm: the same bits with 1 and 2 threads, forward and backward",
          "[layer_norm][threads]") {
  // 257 rows of 2000: enough work for layer_norm to split its rows over two threads; the
  // weight's and the bias's gradients sum over all the rows.
  const int64_t rows = 257, cols = 2000;
  const auto x = random_input({rows, cols}, 41, -3.0, 3.0);
  const auto w = random_input({cols}, 42);
  const auto b = random_input({cols}, 43);
  const auto g = random_input({rows, cols}, 44);
  auto run = [&] {
    return testing::run_forward_backward(
        [](std::span<const Tensor> in) { return layer_norm(in[0], in[1], in[2], 1e-5); }, {x, w, b},
        DType::Float32, g.values);
  };
  const auto [one, two] = testing::at_1_and_2_threads(run);
  CHECK(one.value == two.value);
  CHECK(one.grads == two.grads);
}
