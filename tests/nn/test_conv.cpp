// Tests for nn/conv.h: torch's initialisation after manual_seed(123) bit for bit, the state_dict
// names, forward as the functional op in one cluster, and the errors when built.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/nn/conv.h>
#include "tests/goldens.h"
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

namespace test_conv_modules {

const testing::GoldenTensor& golden(const std::string& name) {
  return testing::golden_file("conv/conv.txt")[name];
}

void check_init(const std::string& name, const Parameter& weight, const Parameter& bias) {
  INFO(name);
  CHECK(weight.shape() == golden("module." + name + ".weight").shape);
  CHECK(weight.values() == golden("module." + name + ".weight").values);
  const bool has_bias = testing::golden_file("conv/conv.txt").contains("module." + name + ".bias");
  REQUIRE(bias.defined() == has_bias);
  if (has_bias) CHECK(bias.values() == golden("module." + name + ".bias").values);
}

}  // namespace test_conv_modules

TEST_CASE("conv modules: torch's init from manual_seed(123), bit for bit", "[nn][conv]") {
  using test_conv_modules::check_init;
  // The order and arguments of make_conv_goldens.py's modules().
  manual_seed(123);
  const nn::Conv2d a(3, 8, 3);
  const nn::Conv2d b(4, 6, {3, 2}, 2, 1, 1, 2, false);
  const nn::Conv2d c(2, 4, 5, 1, "same", 2, 1, true, DType::Float64);
  const nn::Conv1d d(4, 6, 3, 1, 0, 1, 2);
  const nn::ConvTranspose2d e(4, 6, 3, 2, 0, 0, 2);
  check_init("Conv2d.a", a.weight, a.bias);
  check_init("Conv2d.b", b.weight, b.bias);
  check_init("Conv2d.c", c.weight, c.bias);
  check_init("Conv1d.a", d.weight, d.bias);
  check_init("ConvTranspose2d.a", e.weight, e.bias);
  CHECK(c.weight.dtype() == DType::Float64);

  Tape tape;
  TapeScope scope(tape);
  const testing::GoldenTensor& x = test_conv_modules::golden("module.Conv2d.a.x");
  const int32_t first = tape.size() + 1;  // after the input leaf
  const Tensor y = a(from_values(x.shape, x.values));
  testing::require_near(y.values(), test_conv_modules::golden("module.Conv2d.a.y"), DType::Float32,
                        64, "y");
  for (int32_t id = first; id < tape.size(); ++id) {
    INFO("node " << id);
    const int32_t s = tape.node(id).scope;
    REQUIRE(s >= 0);
    CHECK(tape.scopes().name(s) == "Conv2d");
  }
}

TEST_CASE("conv modules: torch's state_dict names and gradients that reach them", "[nn][conv]") {
  manual_seed(1);
  nn::Sequential model({std::make_shared<nn::Conv2d>(2, 4, 3, 1, "same"),
                        std::make_shared<nn::ConvTranspose2d>(4, 2, 2, 2),
                        std::make_shared<nn::Conv1d>(2, 3, 3, 1, 0, 1, 1, false)});
  std::vector<std::string> keys;
  for (const auto& [key, p] : model.state_dict()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias", "2.weight"});
  Tape tape;
  TapeScope scope(tape);
  const Tensor h = model.at<nn::ConvTranspose2d>(1)(model.at<nn::Conv2d>(0)(rand({2, 2, 3, 3})));
  CHECK(h.shape() == Shape{2, 2, 6, 6});
  const Tensor y = model.at<nn::Conv1d>(2)(reshape(h, {2, 2, 36}));
  CHECK(y.shape() == Shape{2, 3, 34});
  tape.backward(sum(y * y));
  CHECK(model.at<nn::Conv2d>(0).weight.has_grad());
  CHECK(model.at<nn::ConvTranspose2d>(1).bias.has_grad());
  CHECK(model.at<nn::Conv1d>(2).weight.has_grad());
}

TEST_CASE("conv modules: bad arguments name the module when it is built", "[nn][conv][errors]") {
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(nn::Conv2d(4, 6, 3, 1, 0, 1, 4),
                    "Conv2d \"Conv2d\": groups 4 must be positive and divide in_channels 4 and "
                    "out_channels 6");
  CHECK_THROWS_WITH(nn::Conv2d(4, 6, 3, 2, "same"),
                    Contains("padding \"same\" is not supported for strided convolutions"));
  CHECK_THROWS_WITH(nn::Conv2d(4, 6, 3, 1, "full"), Contains("padding \"full\" is not"));
  CHECK_THROWS_WITH(nn::Conv2d(0, 6, 3), Contains("in_channels 0 and out_channels 6 must be"));
  CHECK_THROWS_WITH(nn::Conv2d(4, 6, {3, 0}), Contains("kernel_size 3×0 must be at least 1"));
  CHECK_THROWS_WITH(nn::Conv1d(4, 6, 3, 1, {1, 2}), Contains("Conv1d \"Conv1d\": padding takes"));
  CHECK_THROWS_WITH(nn::ConvTranspose2d(4, 6, 3, 1, 0, 1),
                    Contains("output_padding 1×1 must be at least 0 and smaller than the stride"));
  Tape tape;
  TapeScope scope(tape);
  const nn::Conv2d conv(4, 6, 3);
  CHECK_THROWS_WITH(conv(zeros({1, 3, 5, 5})),
                    Contains("conv2d: input [1, 3, 5, 5] x weight \"Conv2d.weight\" [6, 4, 3, 3]"));
}
