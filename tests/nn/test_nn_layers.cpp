// Tests for torch's LayerNorm (nn::TorchLayerNorm) and RMSNorm (nn::TorchRMSNorm, nn/norms.h) and
// Embedding's padding_idx and max_norm (nn/layers.h): torch's defaults and names, values and
// gradients against torch (tests/goldens/nn_layers), float64 gradchecks, and the errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.h>
#include "tests/goldens.h"
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

namespace test_nn_layers {

const testing::GoldenFile& golden() {
  return testing::golden_file("nn_layers/nn_layers.txt");
}

struct DTypeTag {
  std::string tag;
  DType dtype;
};
const std::vector<DTypeTag> kDTypes = {{"f32", DType::Float32}, {"f64", DType::Float64}};

// Runs `m` on the case's x, backward with its dy, and compares y, dx and each named parameter
// gradient ("w" -> ".dw") with torch's.
void check_norm_case(UnaryModule& m, const std::string& key, DType dtype,
                     const std::vector<std::pair<std::string, Parameter>>& params) {
  INFO(key);
  const auto& g = golden();
  for (const auto& [short_name, p] : params) Parameter(p).assign(g[key + "." + short_name].values);
  Tape tape;
  TapeScope scope(tape);
  const auto& gx = g[key + ".x"];
  Tensor x = from_values(gx.shape, gx.values, dtype, true);
  Tensor y = m.forward(x);
  REQUIRE(y.shape() == gx.shape);
  tape.backward(y, g[key + ".dy"].values);
  const double ulps = 16;
  testing::require_near(y.values(), g[key + ".y"], dtype, ulps, key + ".y");
  testing::require_near(x.grad_values(), g[key + ".dx"], dtype, ulps, key + ".dx");
  for (const auto& [short_name, p] : params) {
    testing::require_near(p.grad_values(), g[key + ".d" + short_name], dtype, ulps,
                          key + ".d" + short_name);
  }
}

std::vector<std::string> state_names(const nn::Module& m) {
  std::vector<std::string> names;
  for (const auto& [name, p] : m.state_dict()) names.push_back(name);
  return names;
}

}  // namespace test_nn_layers

TEST_CASE("nn::TorchLayerNorm: torch.nn.LayerNorm's defaults, names and initial values",
          "[nn][nn_layers]") {
  using test_nn_layers::state_names;
  nn::TorchLayerNorm ln(Shape{3, 4});
  CHECK(ln.eps() == 1e-5);
  CHECK(ln.elementwise_affine());
  CHECK(ln.normalized_shape() == Shape{3, 4});
  CHECK(state_names(ln) == std::vector<std::string>{"weight", "bias"});
  CHECK(ln.weight.shape() == Shape{3, 4});
  CHECK(ln.weight.values() == std::vector<double>(12, 1.0));
  CHECK(ln.bias.values() == std::vector<double>(12, 0.0));
  CHECK(nn::TorchLayerNorm(5).normalized_shape() == Shape{5});
  CHECK(state_names(nn::TorchLayerNorm(5, 1e-5, true, false)) ==
        std::vector<std::string>{"weight"});
  CHECK(nn::TorchLayerNorm(5, 1e-5, false).state_dict().empty());
  // The book's LayerNorm keeps its names (the GPT's checkpoints use them).
  CHECK(state_names(nn::LayerNorm(5)) == std::vector<std::string>{"scale", "shift"});
}

TEST_CASE(
    "nn::TorchLayerNorm: values and gradients match torch, one or two dims, with and "
    "without weight and bias",
    "[nn][nn_layers][goldens]") {
  for (const auto& [tag, dtype] : test_nn_layers::kDTypes) {
    using test_nn_layers::check_norm_case;
    nn::TorchLayerNorm last(5, 1e-5, true, true, dtype);
    check_norm_case(last, "layer_norm.ln_last." + tag, dtype,
                    {{"w", last.weight}, {"b", last.bias}});
    nn::TorchLayerNorm two(Shape{3, 4}, 1e-5, true, true, dtype);
    check_norm_case(two, "layer_norm.ln_two_dims." + tag, dtype,
                    {{"w", two.weight}, {"b", two.bias}});
    nn::TorchLayerNorm no_bias(6, 1e-5, true, false, dtype);
    check_norm_case(no_bias, "layer_norm.ln_no_bias." + tag, dtype, {{"w", no_bias.weight}});
    nn::TorchLayerNorm plain(Shape{2, 3}, 1e-3, false, true, dtype);
    check_norm_case(plain, "layer_norm.ln_plain." + tag, dtype, {});
  }
}

TEST_CASE("nn::TorchRMSNorm: torch 2.4's defaults and numbers (eps None is finfo eps)",
          "[nn][nn_layers][goldens]") {
  using test_nn_layers::state_names;
  nn::TorchRMSNorm defaults(8);
  CHECK_FALSE(defaults.eps().has_value());
  CHECK(state_names(defaults) == std::vector<std::string>{"weight"});
  CHECK(defaults.weight.values() == std::vector<double>(8, 1.0));
  CHECK(nn::TorchRMSNorm(8, 1e-6, false).state_dict().empty());
  for (const auto& [tag, dtype] : test_nn_layers::kDTypes) {
    using test_nn_layers::check_norm_case;
    nn::TorchRMSNorm last(8, std::nullopt, true, dtype);
    check_norm_case(last, "rms_norm.rms_last." + tag, dtype, {{"w", last.weight}});
    nn::TorchRMSNorm two(Shape{2, 4}, 1e-6, true, dtype);
    check_norm_case(two, "rms_norm.rms_two_dims." + tag, dtype, {{"w", two.weight}});
    nn::TorchRMSNorm plain(5, std::nullopt, false, dtype);
    check_norm_case(plain, "rms_norm.rms_plain." + tag, dtype, {});
  }
  // finfo eps decides a zero row: 0·rsqrt(0 + eps) = 0, not NaN.
  Tape tape;
  TapeScope scope(tape);
  CHECK(nn::TorchRMSNorm(3)(zeros({2, 3})).values() == std::vector<double>(6, 0.0));
}

TEST_CASE("nn::TorchLayerNorm and nn::TorchRMSNorm: float64 gradchecks over two dims, one cluster",
          "[nn][nn_layers][gradcheck]") {
  nn::TorchLayerNorm ln(Shape{2, 3}, 1e-5, true, true, DType::Float64, "ln");
  nn::TorchRMSNorm rms(Shape{2, 3}, std::nullopt, true, DType::Float64, "rms");
  ln.weight.assign(std::vector<double>{0.5, 1.5, -1, 2, 0.25, 1});
  ln.bias.assign(std::vector<double>{0.1, -0.2, 0.3, 0, 0.5, -1});
  rms.weight.assign(std::vector<double>{1.5, -0.5, 2, 1, 0.75, -1.25});
  for (nn::UnaryModule* m : std::vector<nn::UnaryModule*>{&ln, &rms}) {
    INFO(m->name());
    const GradcheckReport on_x =
        gradcheck(m->name(), [&](std::span<const Tensor> in) { return m->forward(in[0]); },
                  {random_input({2, 2, 3}, 3)});
    INFO(on_x.message);
    CHECK(on_x.passed);
    const std::vector<double> x = random_input({2, 2, 3}, 4).values;
    const GradcheckReport on_params = gradcheck_parameters(
        m->name(),
        [&] {
          return m->forward(from_values(Shape{2, 2, 3}, x, DType::Float64));
        },
        m->parameters());
    INFO(on_params.message);
    CHECK(on_params.passed);
    Tape tape;
    TapeScope scope(tape);
    const int32_t first = tape.size();
    m->forward(from_values(Shape{2, 2, 3}, x, DType::Float64));
    for (int32_t id = first; id < tape.size(); ++id) {
      if (tape.node(id).op == nullptr) continue;
      REQUIRE(tape.node(id).scope >= 0);
      CHECK(tape.scopes().name(tape.node(id).scope) == m->name());
    }
  }
}

TEST_CASE("nn::TorchLayerNorm and nn::TorchRMSNorm: bad shapes and eps name the module",
          "[nn][nn_layers][errors]") {
  CHECK_THROWS_WITH(nn::TorchLayerNorm(Shape{3, 0}, 1e-5, true, true, DType::Float32, "ln"),
                    Catch::Contains("LayerNorm \"ln\"") && Catch::Contains("[3, 0]"));
  CHECK_THROWS_WITH(nn::TorchLayerNorm(4, -1.0), Catch::Contains("eps"));
  CHECK_THROWS_WITH(nn::TorchRMSNorm(4, -1.0),
                    Catch::Contains("RMSNorm") && Catch::Contains("eps"));
  CHECK_THROWS_WITH(nn::TorchRMSNorm(Shape{}), Catch::Contains("normalized_shape"));
  Tape tape;
  TapeScope scope(tape);
  nn::TorchLayerNorm ln(Shape{3, 4}, 1e-5, true, true, DType::Float32, "ln");
  CHECK_THROWS_WITH(ln(zeros({2, 3, 5})), Catch::Contains("LayerNorm \"ln\"") &&
                                              Catch::Contains("[3, 4]") &&
                                              Catch::Contains("[2, 3, 5]"));
  CHECK_THROWS_WITH(ln(zeros({4})), Catch::Contains("[4]"));
  nn::TorchRMSNorm rms(6, std::nullopt, true, DType::Float32, "rms");
  CHECK_THROWS_WITH(rms(zeros({2, 5})), Catch::Contains("RMSNorm \"rms\"") &&
                                            Catch::Contains("[6]") && Catch::Contains("[2, 5]"));
}

TEST_CASE("nn::Embedding padding_idx: the row starts at zero, is read, and gets no gradient",
          "[nn][nn_layers][goldens]") {
  const auto& g = test_nn_layers::golden();
  for (const auto& [tag, dtype] : test_nn_layers::kDTypes) {
    for (const auto& [name, padding_idx] :
         {std::pair<std::string, int64_t>{"pad2", 2}, {"pad_last", -1}}) {
      const std::string key = "embedding." + name + "." + tag;
      INFO(key);
      manual_seed(36);
      nn::Embedding emb(10, 4, {.padding_idx = padding_idx}, dtype);
      CHECK(emb.padding_idx() == (padding_idx < 0 ? 9 : padding_idx));
      CHECK(emb.weight.values() == g[key + ".init"].values);  // the same stream, the row zeroed
      std::vector<double> w = emb.weight.values();
      for (int64_t j = 0; j < 4; ++j) w[size_t(*emb.padding_idx() * 4 + j)] = 0.5;
      emb.weight.assign(w);
      Tape tape;
      TapeScope scope(tape);
      const auto& ids = g[key + ".ids"];
      Tensor y = emb(Ids(ids.shape, ids.ints()));
      CHECK(y.values() == g[key + ".y"].values);
      tape.backward(y, g[key + ".dy"].values);
      testing::require_near(emb.weight.grad_values(), g[key + ".dweight"], dtype, 4, "dweight");
    }
  }
}

TEST_CASE("nn::Embedding max_norm: looked-up rows renormed in place as torch, every norm_type",
          "[nn][nn_layers][goldens]") {
  const auto& g = test_nn_layers::golden();
  struct Case {
    std::string name;
    double max_norm, norm_type;
  };
  for (const auto& [tag, dtype] : test_nn_layers::kDTypes) {
    for (const Case& c :
         {Case{"l2", 1.0, 2.0}, Case{"l1", 1.5, 1.0},
          Case{"linf", 0.75, std::numeric_limits<double>::infinity()}, Case{"p3", 1.2, 3.0}}) {
      const std::string key = "embedding." + c.name + "." + tag;
      INFO(key);
      manual_seed(7);
      nn::Embedding emb(6, 3, {.max_norm = c.max_norm, .norm_type = c.norm_type}, dtype);
      CHECK(emb.weight.values() == g[key + ".before"].values);
      Tape tape;
      TapeScope scope(tape);
      const auto& ids = g[key + ".ids"];
      Tensor y = emb(Ids(ids.shape, ids.ints()));
      testing::require_near(emb.weight.values(), g[key + ".after"], dtype, 2, "after");
      testing::require_near(y.values(), g[key + ".y"], dtype, 2, "y");
      tape.backward(y, g[key + ".dy"].values);
      testing::require_near(emb.weight.grad_values(), g[key + ".dweight"], dtype, 4, "dweight");
    }
  }
}

TEST_CASE("nn::Embedding options: bad values and ids name the module, and change nothing",
          "[nn][nn_layers][errors]") {
  CHECK_THROWS_WITH(nn::Embedding(5, 2, {.padding_idx = 5}, DType::Float32, "emb"),
                    Catch::Contains("Embedding \"emb\"") && Catch::Contains("padding_idx 5"));
  CHECK_THROWS_WITH(nn::Embedding(5, 2, {.padding_idx = -6}), Catch::Contains("padding_idx -6"));
  CHECK_THROWS_WITH(nn::Embedding(5, 2, {.max_norm = 0.0}), Catch::Contains("max_norm"));
  CHECK_THROWS_WITH(nn::Embedding(5, 2, {.max_norm = 1.0, .norm_type = -1.0}),
                    Catch::Contains("norm_type"));
  nn::Embedding emb(5, 2, {.max_norm = 0.5}, DType::Float32, "emb");
  const std::vector<double> before = emb.weight.values();
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(emb(Ids::from_row({0, 7})), Catch::Contains("Embedding \"emb\"") &&
                                                    Catch::Contains("7") &&
                                                    Catch::Contains("[0, 5)"));
  CHECK(emb.weight.values() == before);  // checked before any row moves
}
