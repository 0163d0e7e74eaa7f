// Tests for nn/activations.h: torch's defaults, the ops' values, one cluster per module, use in
// nn::Sequential, and bad arguments named with the module, the option and the input's shape.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.h>
#include "tests/nn/module_scope_testing.h"

using namespace tapegrad;

TEST_CASE("activation modules: torch's defaults", "[nn][activations]") {
  CHECK(nn::LeakyReLU().negative_slope() == 0.01);
  CHECK(nn::ELU().alpha() == 1.0);
  CHECK(nn::Softplus().beta() == 1.0);
  CHECK(nn::Softplus().threshold() == 20.0);
  CHECK(nn::Flatten().start_dim() == 1);
  CHECK(nn::Flatten().end_dim() == -1);
  CHECK(nn::ReLU().name() == "ReLU");
  CHECK(nn::Unflatten(1, {2, 3}).sizes() == std::vector<int64_t>{2, 3});
}

TEST_CASE("activation modules: each gives its op's values, recorded in one cluster",
          "[nn][activations]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(rand(Shape{2, 3, 4}, DType::Float64) * 4.0 - 2.0);
  struct Case {
    std::shared_ptr<nn::UnaryModule> module;
    Tensor expected;
  };
  const std::vector<Case> cases = {
      {std::make_shared<nn::ReLU>("act"), relu(x)},
      {std::make_shared<nn::LeakyReLU>(0.2, "act"), leaky_relu(x, 0.2)},
      {std::make_shared<nn::ELU>(0.5, "act"), elu(x, 0.5)},
      {std::make_shared<nn::SiLU>("act"), silu(x)},
      {std::make_shared<nn::Mish>("act"), mish(x)},
      {std::make_shared<nn::Sigmoid>("act"), sigmoid(x)},
      {std::make_shared<nn::Tanh>("act"), tanh(x)},
      {std::make_shared<nn::Softplus>(2.0, 3.0, "act"), softplus(x, 2.0, 3.0)},
      {std::make_shared<nn::Softmax>(1, "act"), softmax(x, 1)},
      {std::make_shared<nn::LogSoftmax>(-1, "act"), log_softmax(x, -1)},
      {std::make_shared<nn::Flatten>(1, -1, "act"), flatten(x, 1, -1)},
      {std::make_shared<nn::Unflatten>(2, std::vector<int64_t>{2, -1}, "act"),
       unflatten(x, 2, {2, 2})},
  };
  for (const Case& c : cases) {
    INFO(c.expected.node().op->name);
    const int32_t first = tape.size();
    const Tensor y = (*c.module)(x);
    CHECK(y.shape() == c.expected.shape());
    CHECK(y.values() == c.expected.values());
    CHECK(testing::all_in_scope(tape, first, "act"));
  }
  nn::Identity identity;
  CHECK(identity(x).id() == x.id());  // x itself, nothing recorded
}

TEST_CASE("activation modules in nn::Sequential: torch's state_dict names and a backward",
          "[nn][activations]") {
  manual_seed(3);
  nn::Sequential model({std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(12, 5),
                        std::make_shared<nn::LeakyReLU>(), std::make_shared<nn::Linear>(5, 3),
                        std::make_shared<nn::LogSoftmax>(1)});
  std::vector<std::string> keys;
  for (const auto& [key, p] : model.state_dict()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"1.weight", "1.bias", "3.weight", "3.bias"});
  Tape tape;
  TapeScope scope(tape);
  const Tensor y = model(rand(Shape{4, 3, 4}));
  CHECK(y.shape() == Shape{4, 3});
  tape.backward(sum(y * y));
  CHECK(model.at<nn::Linear>(1).weight.has_grad());
}

TEST_CASE("activation modules: bad arguments name the module, the option and the shape",
          "[nn][activations]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor v = zeros(Shape{3});
  const Tensor m = zeros(Shape{2, 12});
  CHECK_THROWS_WITH(nn::Flatten(1, -1, "flat")(v),
                    Catch::Contains("Flatten \"flat\"") && Catch::Contains("[3]"));
  CHECK_THROWS_WITH(nn::Flatten(1, 0)(m), Catch::Contains("Flatten") &&
                                              Catch::Contains("start_dim 1 comes after end_dim 0"));
  CHECK_THROWS_WITH(nn::Softmax(2)(m), Catch::Contains("Softmax \"Softmax\"") &&
                                           Catch::Contains("dim 2") && Catch::Contains("[2, 12]"));
  CHECK_THROWS_WITH(nn::LogSoftmax(-3)(m),
                    Catch::Contains("LogSoftmax") && Catch::Contains("[2, 12]"));
  CHECK_THROWS_WITH(nn::Unflatten(1, {5, -1})(m),
                    Catch::Contains("Unflatten") && Catch::Contains("[2, 12]"));
  CHECK_THROWS_WITH(nn::Unflatten(4, {3, 4})(m),
                    Catch::Contains("Unflatten") && Catch::Contains("[2, 12]"));
  CHECK_THROWS_WITH(nn::Unflatten(1, {}),
                    Catch::Contains("Unflatten") && Catch::Contains("sizes is empty"));
  CHECK_THROWS_WITH(nn::Unflatten(1, {0, 4}),
                    Catch::Contains("Unflatten") && Catch::Contains("sizes holds 0"));
  CHECK_THROWS_WITH(nn::LeakyReLU(NAN), Catch::Contains("LeakyReLU") &&
                                            Catch::Contains("negative_slope must be finite"));
  CHECK_THROWS_WITH(nn::ELU(INFINITY), Catch::Contains("ELU") && Catch::Contains("alpha"));
  CHECK_THROWS_WITH(nn::Softplus(0.0),
                    Catch::Contains("Softplus") && Catch::Contains("beta must not be 0"));
  CHECK_THROWS_WITH(nn::Softplus(1.0, NAN), Catch::Contains("threshold must be finite"));
}

TEST_CASE("nn::GELU: torch's default approximate \"none\", \"tanh\" the book's, others an Error",
          "[nn][activations]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = rand(Shape{2, 5}, DType::Float64) * 6.0 - 3.0;
  CHECK(nn::GELU().approximate == "none");
  CHECK(nn::GELU().forward(x).values() == gelu(x, "none").values());
  CHECK(nn::GELU("tanh").forward(x).values() == gelu(x, "tanh").values());
  CHECK(gelu(x, "none").values() != gelu(x, "tanh").values());
  CHECK_THROWS_WITH(nn::GELU("exact", "act"), Catch::Contains("GELU \"act\"") &&
                                                  Catch::Contains("approximate") &&
                                                  Catch::Contains("\"exact\""));
}
