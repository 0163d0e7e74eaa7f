// Tests for nn/pooling.h: torch's defaults, the ops' values, one cluster per module, use in
// nn::Sequential, and bad arguments named with the module and the op.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.h>
#include "tests/nn/module_scope_testing.h"

using namespace tapegrad;

TEST_CASE("pooling modules: torch's defaults", "[nn][pooling]") {
  const nn::MaxPool2d pool(3);
  CHECK(pool.kernel_size().h == 3);
  CHECK(pool.stride().w == 3);  // stride=None: the kernel size
  CHECK(nn::MaxPool2d(3, 1).stride().h == 1);
  CHECK(nn::AvgPool2d(2).name() == "AvgPool2d");
  CHECK(nn::AdaptiveAvgPool2d({2, 3}).output_size().w == 3);
  CHECK(nn::Upsample({.scale_factor = 2.0}).options().mode == InterpolateMode::Nearest);
}

TEST_CASE("pooling modules: each gives its op's values, recorded in one cluster", "[nn][pooling]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = requires_grad(rand(Shape{2, 3, 6, 5}, DType::Float64));
  const Tensor s = requires_grad(rand(Shape{2, 3, 7}, DType::Float64));
  struct Case {
    std::shared_ptr<nn::UnaryModule> module;
    Tensor input, expected;
  };
  const std::vector<Case> cases = {
      {std::make_shared<nn::MaxPool2d>(3, 2, 1, 1, true, "pool"), x,
       max_pool2d(x, 3, 2, 1, 1, true)},
      {std::make_shared<nn::MaxPool1d>(2, 1, 1, 2, false, "pool"), s, max_pool1d(s, 2, 1, 1, 2)},
      {std::make_shared<nn::AvgPool2d>(3, 2, 1, false, false, std::nullopt, "pool"), x,
       avg_pool2d(x, 3, 2, 1, false, false)},
      {std::make_shared<nn::AvgPool1d>(3, 2, 1, true, true, "pool"), s,
       avg_pool1d(s, 3, 2, 1, true)},
      {std::make_shared<nn::AdaptiveAvgPool2d>(Size2{2, 3}, "pool"), x,
       adaptive_avg_pool2d(x, {2, 3})},
      {std::make_shared<nn::AdaptiveMaxPool2d>(Size2{4, 2}, "pool"), x,
       adaptive_max_pool2d(x, {4, 2})},
      {std::make_shared<nn::Upsample>(
           InterpolateOptions{.scale_factor = 1.5, .mode = InterpolateMode::Bilinear}, "pool"),
       x, interpolate(x, {.scale_factor = 1.5, .mode = InterpolateMode::Bilinear})},
  };
  for (const Case& c : cases) {
    INFO(c.expected.node().op->name);
    const int32_t first = tape.size();
    const Tensor y = (*c.module)(c.input);
    CHECK(y.shape() == c.expected.shape());
    CHECK(y.values() == c.expected.values());
    CHECK(testing::all_in_scope(tape, first, "pool"));
  }
}

TEST_CASE("pooling modules in nn::Sequential: a small convolution-free image classifier",
          "[nn][pooling]") {
  manual_seed(5);
  nn::Sequential model({std::make_shared<nn::MaxPool2d>(2), std::make_shared<nn::ReLU>(),
                        std::make_shared<nn::AdaptiveAvgPool2d>(2), std::make_shared<nn::Flatten>(),
                        std::make_shared<nn::Linear>(12, 4)});
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = requires_grad(rand(Shape{2, 3, 8, 8}));
  const Tensor y = model(x);
  CHECK(y.shape() == Shape{2, 4});
  tape.backward(sum(y * y));
  CHECK(model.at<nn::Linear>(4).weight.has_grad());
  CHECK(x.grad<float>() != nullptr);
}

TEST_CASE("pooling modules: bad arguments name the module and the op", "[nn][pooling]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros(Shape{1, 1, 2, 2});
  CHECK_THROWS_WITH(nn::MaxPool2d(3, std::nullopt, 0, 1, false, "pool")(x),
                    "MaxPool2d \"pool\": max_pool2d: x [1, 1, 2, 2]: kernel_size [3, 3] is "
                    "larger than the input [2, 2] with padding [0, 0]: the output size would be "
                    "[0, 0]");
  CHECK_THROWS_WITH(nn::AvgPool1d(2)(x), Catch::Contains("AvgPool1d \"AvgPool1d\": avg_pool1d"));
  CHECK_THROWS_WITH(nn::Upsample({})(x),
                    Catch::Contains("Upsample") && Catch::Contains("exactly one of size"));
}
