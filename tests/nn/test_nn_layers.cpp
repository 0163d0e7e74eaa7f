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
void check_norm_case(nn::UnaryModule& m, const std::string& key, DType dtype,
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

namespace test_nn_layers {

Tensor regression_loss(const std::string& loss, const Tensor& x, const Tensor& t, Reduction r) {
  if (loss == "mse") return mse_loss(x, t, r);
  if (loss == "l1") return l1_loss(x, t, r);
  if (loss == "smooth_l1") return smooth_l1_loss(x, t, {.reduction = r, .beta = 0.5});
  return huber_loss(x, t, {.reduction = r, .delta = 0.7});
}

const std::vector<std::pair<std::string, Reduction>> kReductions = {
    {"none", Reduction::None}, {"mean", Reduction::Mean}, {"sum", Reduction::Sum}};

}  // namespace test_nn_layers

TEST_CASE("mse, l1, smooth_l1 and huber losses broadcast input and target as torch",
          "[losses][nn_layers][goldens]") {
  using namespace test_nn_layers;
  const auto& g = golden();
  for (const auto& [tag, dtype] : kDTypes) {
    for (const std::string c : {"target_row", "both_expand"}) {
      const std::string base = "broadcast." + c + "." + tag;
      for (const std::string loss : {"mse", "l1", "smooth_l1", "huber"}) {
        for (const auto& [rname, reduction] : kReductions) {
          const std::string key = base + "." + loss + "." + rname;
          INFO(key);
          Tape tape;
          TapeScope scope(tape);
          const auto &gx = g[base + ".x"], &gt = g[base + ".t"];
          Tensor x = from_values(gx.shape, gx.values, dtype, true);
          Tensor t = from_values(gt.shape, gt.values, dtype, true);
          Tensor y = regression_loss(loss, x, t, reduction);
          REQUIRE(y.shape() == g[key + ".y"].shape);
          tape.backward(y, g[key + ".dy"].values);
          testing::require_near(y.values(), g[key + ".y"], dtype, 16, "y");
          testing::require_near(x.grad_values(), g[key + ".dx"], dtype, 16, "dx");
          testing::require_near(t.grad_values(), g[key + ".dt"], dtype, 16, "dt");
        }
      }
    }
  }
  // Both expanded (input [4, 1], target [2, 1, 3]): float64 gradchecks of every loss.
  for (const std::string loss : {"mse", "l1", "smooth_l1", "huber"}) {
    const GradcheckReport report =
        gradcheck(loss,
                  [&](std::span<const Tensor> in) {
                    return regression_loss(loss, in[0], in[1], Reduction::Mean);
                  },
                  {random_input({4, 1}, 5), random_input({2, 1, 3}, 6)});
    INFO(report.message);
    CHECK(report.passed);
  }
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(huber_loss(zeros({2, 3}), zeros({2})),
                    Catch::Contains("huber_loss") && Catch::Contains("equal or broadcast"));
  CHECK_THROWS_WITH(mse_loss(zeros({2, 3}), zeros({3, 3}), Reduction::Sum),
                    Catch::Contains("mse_loss") && Catch::Contains("[3, 3]"));
}

TEST_CASE("cross_entropy with probability targets differentiates its class weight, as torch",
          "[losses][nn_layers][goldens]") {
  using namespace test_nn_layers;
  const auto& g = golden();
  for (const auto& [tag, dtype] : kDTypes) {
    for (const std::string ls : {"0.0", "0.2"}) {
      for (const auto& [rname, reduction] : kReductions) {
        const std::string key = "ce_weight." + tag + ".ls" + ls + "." + rname;
        INFO(key);
        Tape tape;
        TapeScope scope(tape);
        const auto &gx = g["ce_weight." + tag + ".x"], &gp = g["ce_weight." + tag + ".p"],
                   &gw = g["ce_weight." + tag + ".w"];
        Tensor x = from_values(gx.shape, gx.values, dtype, true);
        Tensor w = from_values(gw.shape, gw.values, dtype, true);
        Tensor y =
            cross_entropy(x, from_values(gp.shape, gp.values, dtype),
                          {.weight = w, .reduction = reduction, .label_smoothing = std::stod(ls)});
        tape.backward(y, g[key + ".dy"].values);
        testing::require_near(y.values(), g[key + ".y"], dtype, 16, "y");
        testing::require_near(x.grad_values(), g[key + ".dx"], dtype, 16, "dx");
        testing::require_near(w.grad_values(), g[key + ".dw"], dtype, 16, "dw");
      }
    }
  }
  const std::vector<double> p = {0.2, 0.5, 0.3, 0.6, 0.1, 0.3};
  const GradcheckReport report =
      gradcheck("cross_entropy weight",
                [&](std::span<const Tensor> in) {
                  return cross_entropy(in[0], from_values(Shape{2, 3}, p, DType::Float64),
                                       {.weight = in[1], .label_smoothing = 0.1});
                },
                {random_input({2, 3}, 7), random_input({3}, 8, 0.5, 1.5)});
  INFO(report.message);
  CHECK(report.passed);
}

TEST_CASE(
    "nll_loss, cross_entropy with class indices, bce: a weight that requires grad is an "
    "Error naming the loss, as torch",
    "[losses][nn_layers][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = requires_grad(zeros({2, 3}));
  const Tensor w = from_values(Shape{3}, std::vector<double>{1, 2, 3}, DType::Float32, true);
  const Ids t = Ids::from_row({0, 2});
  CHECK_THROWS_WITH(nll_loss(x, t, {.weight = w}), Catch::Contains("nll_loss") &&
                                                       Catch::Contains("not differentiable") &&
                                                       Catch::Contains("weight"));
  CHECK_THROWS_WITH(cross_entropy(x, t, {.weight = w, .label_smoothing = 0.1}),
                    Catch::Contains("cross_entropy") && Catch::Contains("not differentiable"));
  const Tensor probs = full(Shape{2, 3}, 0.5);
  CHECK_THROWS_WITH(binary_cross_entropy(probs, probs, {.weight = w}),
                    Catch::Contains("binary_cross_entropy") && Catch::Contains("weight"));
  CHECK_THROWS_WITH(
      binary_cross_entropy_with_logits(x, probs, {.pos_weight = w}),
      Catch::Contains("binary_cross_entropy_with_logits") && Catch::Contains("pos_weight"));
  // A constant weight, or any weight without recording gradients, is what torch accepts.
  CHECK(nll_loss(x, t, {.weight = detach(w)}).item() == 0.0);
  NoGradGuard no_grad;
  CHECK(std::isnan(cross_entropy(x, t, {.weight = w}).item()) == false);
}

namespace test_nn_layers {

// A conv case of nn_layers.txt: the module built after manual_seed(seed) holds torch's weights
// (float32), then with the golden's weights its output and gradients are torch's.
void check_conv_case(nn::UnaryModule& m, Parameter& weight, Parameter& bias, const std::string& key,
                     DType dtype) {
  INFO(key);
  const auto& g = golden();
  if (dtype == DType::Float32) {
    CHECK(weight.values() == g[key + ".weight"].values);
    if (bias.defined()) CHECK(bias.values() == g[key + ".bias"].values);
  }
  REQUIRE(bias.defined() == g.contains(key + ".bias"));
  weight.assign(g[key + ".weight"].values);
  if (bias.defined()) bias.assign(g[key + ".bias"].values);
  Tape tape;
  TapeScope scope(tape);
  const auto& gx = g[key + ".x"];
  Tensor x = from_values(gx.shape, gx.values, dtype, true);
  Tensor y = m.forward(x);
  REQUIRE(y.shape() == g[key + ".y"].shape);
  tape.backward(y, g[key + ".dy"].values);
  const double ulps = 64;
  testing::require_near(y.values(), g[key + ".y"], dtype, ulps, "y");
  testing::require_near(x.grad_values(), g[key + ".dx"], dtype, ulps, "dx");
  testing::require_near(weight.grad_values(), g[key + ".dweight"], dtype, ulps, "dweight");
  if (bias.defined()) {
    testing::require_near(bias.grad_values(), g[key + ".dbias"], dtype, ulps, "dbias");
  }
}

}  // namespace test_nn_layers

TEST_CASE("Conv1d and Conv2d padding_mode, ConvTranspose1d: torch's init, values and gradients",
          "[nn][conv][nn_layers][goldens]") {
  using test_nn_layers::check_conv_case;
  for (const auto& [tag, dtype] : test_nn_layers::kDTypes) {
    const std::string k = "conv.";
    manual_seed(100);
    nn::Conv2d a(2, 3, 3, 1, {1, 2}, 1, 1, true, "reflect", dtype);
    check_conv_case(a, a.weight, a.bias, k + "c2d_reflect." + tag, dtype);
    manual_seed(101);
    nn::Conv2d b(2, 2, {3, 4}, 1, "same", {1, 2}, 1, true, "replicate", dtype);
    check_conv_case(b, b.weight, b.bias, k + "c2d_replicate_same." + tag, dtype);
    manual_seed(102);
    nn::Conv2d c(3, 4, 3, 2, 2, 1, 1, false, "circular", dtype);
    check_conv_case(c, c.weight, c.bias, k + "c2d_circular_stride." + tag, dtype);
    manual_seed(103);
    nn::Conv1d d(2, 3, 3, 1, 2, 1, 1, true, "reflect", dtype);
    check_conv_case(d, d.weight, d.bias, k + "c1d_reflect." + tag, dtype);
    manual_seed(104);
    nn::Conv1d e(2, 2, 4, 1, "same", 1, 1, true, "circular", dtype);
    check_conv_case(e, e.weight, e.bias, k + "c1d_circular_same." + tag, dtype);
    manual_seed(105);
    nn::Conv1d f(4, 2, 2, 1, 1, 1, 2, true, "replicate", dtype);
    check_conv_case(f, f.weight, f.bias, k + "c1d_replicate_groups." + tag, dtype);
    manual_seed(106);
    nn::ConvTranspose1d g(3, 4, 3, 1, 0, 0, 1, true, 1, dtype);
    check_conv_case(g, g.weight, g.bias, k + "ct1d." + tag, dtype);
    manual_seed(107);
    nn::ConvTranspose1d h(4, 6, 3, 2, 1, 1, 2, true, 2, dtype);
    check_conv_case(h, h.weight, h.bias, k + "ct1d_strided." + tag, dtype);
    manual_seed(108);
    nn::ConvTranspose1d u(2, 3, 2, 3, 0, 0, 1, false, 1, dtype);
    check_conv_case(u, u.weight, u.bias, k + "ct1d_unbatched." + tag, dtype);
  }
}

TEST_CASE("padding_mode and conv_transpose1d: float64 gradchecks, names and errors",
          "[nn][conv][nn_layers][gradcheck]") {
  manual_seed(3);
  nn::Conv2d reflect(2, 2, 3, 1, 1, 1, 1, true, "reflect", DType::Float64, "reflect");
  nn::Conv1d circular(2, 2, 3, 1, "same", 2, 1, true, "circular", DType::Float64, "circular");
  nn::ConvTranspose1d transposed(2, 2, 3, 2, 1, 1, 1, true, 1, DType::Float64, "transposed");
  struct Case {
    nn::UnaryModule* m;
    Shape shape;
  };
  for (const Case& c :
       {Case{&reflect, {1, 2, 3, 4}}, Case{&circular, {2, 2, 5}}, Case{&transposed, {1, 2, 3}}}) {
    INFO(c.m->name());
    const GradcheckReport report =
        gradcheck(c.m->name(), [&](std::span<const Tensor> in) { return c.m->forward(in[0]); },
                  {random_input(c.shape, 9)});
    INFO(report.message);
    CHECK(report.passed);
    const std::vector<double> x = random_input(c.shape, 10).values;
    const GradcheckReport on_params = gradcheck_parameters(
        c.m->name(), [&] { return c.m->forward(from_values(c.shape, x, DType::Float64)); },
        c.m->parameters());
    INFO(on_params.message);
    CHECK(on_params.passed);
  }
  CHECK(reflect.padding_mode() == "reflect");
  CHECK(nn::Conv2d(1, 1, 1).padding_mode() == "zeros");
  std::vector<std::string> names;
  for (const auto& [name, p] : transposed.state_dict()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"weight", "bias"});
  CHECK(transposed.weight.shape() == Shape{2, 2, 3});
  using Catch::Contains;
  CHECK_THROWS_WITH(nn::Conv2d(1, 1, 3, 1, 1, 1, 1, true, "mirror", DType::Float32, "c"),
                    Contains("Conv2d \"c\"") && Contains("padding_mode") && Contains("mirror"));
  CHECK_THROWS_WITH(nn::Conv1d(1, 1, 3, 1, 1, 1, 1, true, "same"), Contains("padding_mode"));
  CHECK_THROWS_WITH(nn::ConvTranspose1d(2, 2, 3, 2, 0, 2),
                    Contains("ConvTranspose1d") && Contains("output_padding 2"));
  CHECK_THROWS_WITH(nn::ConvTranspose1d(3, 2, 3, 1, 0, 0, 2), Contains("groups 2"));
  Tape tape;
  TapeScope scope(tape);
  // reflect needs a pad smaller than the dim: the pad op's Error, as torch's.
  CHECK_THROWS_WITH(reflect(zeros({1, 2, 1, 4}, DType::Float64)), Contains("reflect"));
  CHECK_THROWS_WITH(conv_transpose1d(zeros({1, 3, 4}), zeros({2, 2, 3})),
                    Contains("conv_transpose1d") && Contains("[1, 3, 4]") && Contains("[2, 2, 3]"));
  CHECK_THROWS_WITH(conv_transpose1d(zeros({3, 4, 1, 1}), zeros({3, 2, 3})),
                    Contains("conv_transpose1d") && Contains("[3, 4, 1, 1]"));
  // The functional form is the module's op: the same values.
  const Tensor x = rand(Shape{1, 2, 3}, DType::Float64);
  CHECK(transposed(x).values() == conv_transpose1d(x, tape.parameter(transposed.weight),
                                                   tape.parameter(transposed.bias), 2, 1, 1)
                                      .values());
}

TEST_CASE(
    "random_split: torch's fractions, Subsets as indices into the dataset, DataLoader over "
    "a Subset",
    "[data][nn_layers][goldens]") {
  const auto& g = test_nn_layers::golden();
  struct Case {
    std::string name;
    int64_t n;
    std::vector<double> fractions;
    uint64_t seed;
  };
  for (const Case& c :
       {Case{"n10_70_20_10", 10, {0.7, 0.2, 0.1}, 42}, Case{"n11_50_50", 11, {0.5, 0.5}, 0},
        Case{"n7_third", 7, {1.0 / 3, 1.0 / 3, 1.0 / 3}, 5},
        Case{"n5_zero", 5, {0.0, 0.9, 0.1}, 3}}) {
    std::vector<int64_t> rows(static_cast<size_t>(c.n));
    for (int64_t i = 0; i < c.n; ++i) rows[size_t(i)] = 100 + i;
    const data::TensorDataset ds({Ids(Shape{c.n}, rows)});
    const std::vector<data::Subset> parts = data::random_split(ds, c.fractions, c.seed);
    REQUIRE(parts.size() == c.fractions.size());
    for (size_t i = 0; i < parts.size(); ++i) {
      const std::string key = "split." + c.name + ".p" + std::to_string(i);
      INFO(key);
      CHECK(parts[i].indices() == g[key].ints());
      CHECK(&parts[i].dataset() == &ds);  // a view: indices into the same dataset
      for (int64_t j = 0; j < parts[i].size(); ++j) {
        CHECK(parts[i][j].ids(0).values()[0] == 100 + parts[i].indices()[size_t(j)]);
      }
    }
  }
  // A DataLoader over a Subset reads its rows in its order (then shuffled as any dataset's).
  std::vector<int64_t> rows(10);
  for (int64_t i = 0; i < 10; ++i) rows[size_t(i)] = i;
  const data::TensorDataset ds({Ids(Shape{10}, rows)});
  const std::vector<data::Subset> parts = data::random_split(ds, {6, 4}, 42);
  data::DataLoader loader(parts[1], 3);
  std::vector<int64_t> read;
  for (const data::Batch& b : loader) {
    for (const int64_t id : b.ids(0).values()) read.push_back(id);
  }
  CHECK(read == parts[1].indices());
  CHECK(parts[1].to_dataset().size() == 4);
  CHECK(parts[0][-1].ids(0).values()[0] == parts[0].indices().back());
  using Catch::Contains;
  CHECK_THROWS_WITH(data::random_split(ds, std::vector<double>{0.5, 0.4}, 0),
                    Contains("random_split") && Contains("add up to"));
  CHECK_THROWS_WITH(data::random_split(ds, std::vector<double>{1.5, -0.5}, 0),
                    Contains("random_split") && Contains("not between 0 and 1"));
  CHECK_THROWS_WITH(parts[0][6], Contains("Subset[6]"));
  CHECK_THROWS_WITH(data::Subset(ds, {0, 10}), Contains("Subset") && Contains("10"));
  CHECK_THROWS_WITH(parts[1].batch(std::vector<int64_t>{0, 4}), Contains("Subset.batch"));
}
