// Tests for bfloat16 weights (nn/layers.h: Linear::use_bf16_weight, use_bf16_weights): a small
// GPT's logits within a stated bound of float32's, cached generation with them (the prefill's
// many-row path and the decode's one-row kernel), the float32 values freed, LoRA adapters kept
// float32 beside converted base layers, and the clear errors: gradients enabled, a training op,
// a merge, a save or a load on a converted weight (loads change nothing), float64 layers; and
// Bf16LoadGuard / set_bf16_weight, a loader's way into bfloat16 without float32 values.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/scope.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/graph/tensor.h>
#include <tapegrad/kernels/gemm/linear_bf16.h>
#include <tapegrad/kernels/gemm/matmul_precision.h>
#include <tapegrad/nn/generate.h>
#include <tapegrad/nn/gpt.h>
#include <tapegrad/nn/gpt2_weights.h>
#include <tapegrad/nn/layers.h>
#include <tapegrad/nn/lora.h>
#include <tapegrad/ops/ops.h>
#include "tests/compare.h"

using namespace tapegrad;

namespace {

// emb_dim 48: each row of a weight has one full 32-weight block and a tail of 16 (the kernel's
// two paths); 97 ids, so the head has rows beyond its blocks of 8.
const nn::GPTConfig kConfig{97, 16, 48, 3, 2, 0.0, true};

nn::GPTModel model_from_seed(const nn::GPTConfig& cfg = kConfig) {
  manual_seed(123);
  nn::GPTModel model(cfg);
  model.eval();
  return model;
}

// The logits [B, T, V] of an uncached forward, under NoGradGuard.
std::vector<float> logits(const nn::GPTModel& model, const Ids& ids) {
  Tape tape;
  TapeScope use(tape);
  NoGradGuard no_grad;
  Tensor y = model(ids);
  return {y.data<float>(), y.data<float>() + y.numel()};
}

struct Error2 {
  double max_abs = 0, relative = 0;  // max |Δ|, and ‖Δ‖₂ / ‖reference‖₂
};
Error2 compare(const std::vector<float>& got, const std::vector<float>& reference) {
  double d2 = 0, r2 = 0, worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = static_cast<double>(got[i]) - reference[i];
    d2 += d * d;
    r2 += static_cast<double>(reference[i]) * reference[i];
    worst = testing::worse(worst, std::fabs(d));
  }
  return {worst, std::sqrt(d2 / r2)};
}

const Ids kPrompt = Ids::from_rows({{5, 6, 7, 90, 11}});

}  // namespace

TEST_CASE("bf16 weights: every Linear converted, its float32 values freed", "[bf16][gpt]") {
  nn::GPTModel model = model_from_seed();
  const std::vector<double> head = model.out_head.weight.values();
  // 2 blocks x (W_query, W_key, W_value, out_proj, ff.layers.0, ff.layers.2) + out_head
  CHECK(nn::use_bf16_weights(model) == 13);
  CHECK(model.out_head.has_bf16_weight());
  CHECK_FALSE(model.out_head.weight.has_values());
  CHECK(model.out_head.weight.shape() == Shape{97, 48});  // the shape and name are kept
  CHECK(model.out_head.weight.name() == "out_head.weight");
  // Embeddings, norms and biases stay float32.
  CHECK(model.tok_emb.weight.has_values());
  CHECK(model.trf_blocks.at<nn::TransformerBlock>(0).att.W_query.bias.has_values());
  // The bfloat16 weights are the float32 ones rounded to nearest even.
  const uint16_t* bits = model.out_head.bf16_weight();
  for (size_t i = 0; i < head.size(); ++i) {
    const float rounded = detail::round_to_bf16(static_cast<float>(head[i]));
    INFO("element " << i);
    REQUIRE(bf16_bits_to_float(bits[i]) == rounded);
  }
  // A second call converts nothing new and changes nothing.
  CHECK(nn::use_bf16_weights(model) == 13);
  CHECK(model.out_head.bf16_weight() == bits);
}

TEST_CASE("bf16 weights: a small GPT's logits within 0.5% (L2) of float32's", "[bf16][gpt]") {
  const nn::GPTModel reference = model_from_seed();
  nn::GPTModel model = model_from_seed();
  nn::use_bf16_weights(model);
  const Ids ids = Ids::from_rows({{5, 6, 7, 90, 11, 3, 3, 40}, {1, 2, 3, 4, 5, 6, 7, 8}});
  const std::vector<float> want = logits(reference, ids);
  const Error2 e = compare(logits(model, ids), want);
  INFO("max abs error " << e.max_abs << ", relative (L2) " << e.relative);
  // bfloat16 keeps 8 significant bits: each weight within 2⁻⁹ relative, and the logits drift by
  // a fraction of a percent; measured here at about a third of these bounds.
  CHECK(e.relative < 5e-3);
  CHECK(e.max_abs < 1.5e-2);
  CHECK(e.relative > 0.0);  // the weights really were rounded
}

TEST_CASE("bf16 weights: cached generation (prefill and one-row decode) as float32 greedy",
          "[bf16][gpt][kv_cache]") {
  const nn::GPTModel reference = model_from_seed();
  nn::GPTModel model = model_from_seed();
  nn::use_bf16_weights(model);
  // 30 new tokens: past the context of 16, so the cache is refilled (prefill) more than once.
  const Ids want = nn::generate_text_simple(reference, kPrompt, 30, 16);
  const Ids cached = nn::generate_text_simple(model, kPrompt, 30, 16);
  const Ids uncached = nn::generate_text_simple(model, kPrompt, 30, 16, /*use_cache=*/false);
  // The greedy margins of this model are wide enough that rounding the weights changes no id.
  CHECK(std::ranges::equal(cached.values(), want.values()));
  CHECK(std::ranges::equal(uncached.values(), want.values()));

  // The cached decode's logits (one row through gemv_bf16) against the uncached forward's last
  // position (the prefill path on every row) of the bfloat16 model: float32 rounding apart.
  Tape tape;
  TapeScope use(tape);
  NoGradGuard no_grad;
  model.reset_cache();
  Tensor first = model.forward(kPrompt, true, true);
  Tensor step = model.forward(Ids::from_rows({{17}}), true, true);  // [1, 1, V]
  const std::vector<float> decoded(step.data<float>(), step.data<float>() + step.numel());
  model.reset_cache();
  const std::vector<float> full =
      logits(model, Ids::from_rows({{5, 6, 7, 90, 11, 17}}));  // [1, 6, V]
  const std::vector<float> last(full.end() - 97, full.end());
  const Error2 e = compare(decoded, last);
  INFO("max abs " << e.max_abs << ", relative " << e.relative);
  CHECK(e.relative < 1e-5);
  CHECK(first.numel() == 97);
}

TEST_CASE("bf16 weights: gradients, training ops and saving are clear errors", "[bf16][gpt]") {
  nn::GPTModel model = model_from_seed();
  nn::use_bf16_weights(model);
  Tape tape;
  TapeScope use(tape);
  // The forward with gradients enabled: the first Linear it meets (the keys' projection).
  REQUIRE_THROWS_WITH(model(kPrompt),
                      Catch::Contains("weight \"trf_blocks.0.att.W_key.weight\" [48, 48] is "
                                      "bfloat16") &&
                          Catch::Contains("NoGradGuard"));
  // An op on the weight itself, gradients or not: its float32 values are gone.
  Tensor x = tape.leaf(Shape{2, 48}, DType::Float32, nullptr, false);
  REQUIRE_THROWS_WITH(
      matmul(x, transpose(model.out_head.weight, 0, 1)),
      Catch::Contains("\"out_head.weight\" [97, 48]") && Catch::Contains("use_bf16_weights"));
  REQUIRE_THROWS_WITH(model.out_head.weight.values(), Catch::Contains("out_head.weight"));
  const auto path = std::filesystem::temp_directory_path() / "tapegrad_bf16_save.safetensors";
  REQUIRE_THROWS_WITH(model.save(path.string()), Catch::Contains("cannot be trained, read, saved"));
  CHECK_FALSE(std::filesystem::exists(path));
  // float64 layers cannot take bfloat16 weights; nothing is converted.
  manual_seed(1);
  nn::GPTModel wide(kConfig, DType::Float64);
  REQUIRE_THROWS_WITH(nn::use_bf16_weights(wide), Catch::Contains("float64"));
  CHECK(wide.out_head.weight.has_values());
  CHECK_FALSE(wide.out_head.has_bf16_weight());
}

TEST_CASE("bf16 weights: a LoRA model's base layers are converted, its adapters stay float32",
          "[bf16][gpt][lora]") {
  nn::GPTModel plain = model_from_seed();
  nn::use_bf16_weights(plain);
  nn::GPTModel model = model_from_seed();
  manual_seed(7);
  CHECK(nn::replace_linear_with_lora(model, /*rank=*/4, /*alpha=*/8.0) == 13);
  CHECK(nn::use_bf16_weights(model) == 13);
  const nn::StateDict sd = model.state_dict();
  CHECK_FALSE(sd.at("trf_blocks.0.att.W_query.linear.weight").has_values());
  CHECK(sd.at("trf_blocks.0.att.W_query.lora.A").has_values());
  CHECK(sd.at("out_head.lora.B").has_values());
  // A fresh adapter (B = 0) adds exact zeros: the same logits as the plain bf16 model.
  const Ids ids = Ids::from_rows({{5, 6, 7, 90, 11, 3}});
  CHECK(logits(model, ids) == logits(plain, ids));
  // Merging writes into the base weight, whose float32 values are gone (merge before converting).
  REQUIRE_THROWS_WITH(nn::merge_lora(model),
                      Catch::Contains("\"trf_blocks.0.att.W_query.linear.weight\""));
}

TEST_CASE("bf16 weights: loading into a converted model is an Error that changes nothing",
          "[bf16][gpt]") {
  nn::GPTModel model = model_from_seed();
  nn::GPTModel source = model_from_seed();
  nn::use_bf16_weights(model);
  const std::vector<double> embeddings = model.tok_emb.weight.values();
  // load_state_dict checks every tensor before it copies any (tok_emb comes first).
  REQUIRE_THROWS_WITH(model.load_state_dict(source.state_dict()),
                      Catch::Contains("\"trf_blocks.0.att.W_query.weight\""));
  CHECK(model.tok_emb.weight.values() == embeddings);
  // The GPT-2 loader too (its plan is checked before any parameter is written).
  const std::string tiny = std::string(TAPEGRAD_GOLDEN_DIR) + "/gpt2/gpt2_tiny.safetensors";
  manual_seed(1);
  nn::GPTModel gpt2(nn::infer_gpt2_config(tiny, "", 3));
  nn::use_bf16_weights(gpt2);
  const std::vector<double> before = gpt2.tok_emb.weight.values();
  REQUIRE_THROWS_WITH(nn::load_gpt2_weights(gpt2, tiny), Catch::Contains("use_bf16_weights"));
  CHECK(gpt2.tok_emb.weight.values() == before);
}

TEST_CASE("bf16 weights: convert_to_bf16_weights reports what the conversion changes",
          "[bf16][gpt]") {
  nn::GPTModel model = model_from_seed();
  // The report compares the last position's logits, as generation's prefill computes them.
  const auto last_logits = [&] {
    Tape tape;
    TapeScope use(tape);
    NoGradGuard no_grad;
    const Tensor y = model.forward(kPrompt, /*use_cache=*/false, /*last_position_only=*/true);
    return std::vector<float>(y.data<float>(), y.data<float>() + y.numel());  // [V]
  };
  const std::vector<float> before = last_logits();
  const nn::Bf16Conversion c = nn::convert_to_bf16_weights(model, kPrompt);
  CHECK(c.layers == 13);
  CHECK(model.out_head.has_bf16_weight());
  const Error2 e = compare(last_logits(), before);
  CHECK(c.max_abs_error == e.max_abs);
  CHECK(c.relative_error == Approx(e.relative).epsilon(1e-12));
  CHECK(c.relative_error > 0.0);
  CHECK(c.relative_error < 5e-3);
  CHECK(c.same_argmax);
  CHECK(model.cache_position() == 0);  // the cache is left reset
}

TEST_CASE(
    "bf16 weights: Bf16LoadGuard builds Linears without float32 values, set_bf16_weight fills",
    "[bf16]") {
  manual_seed(3);
  const Generator before = default_generator();
  std::optional<nn::Linear> linear;
  std::optional<nn::Embedding> embedding;
  {
    const nn::Bf16LoadGuard guard;
    CHECK(nn::Bf16LoadGuard::active());
    linear.emplace(4, 3, /*bias=*/false);
    embedding.emplace(5, 4);
  }
  CHECK(!nn::Bf16LoadGuard::active());
  // Nothing drawn: the generator is where it was, the embedding zeros.
  CHECK(default_generator().random() == Generator(before).random());
  CHECK(embedding->weight.values() == std::vector<double>(20, 0.0));
  CHECK(!linear->weight.has_values());
  CHECK(!linear->has_bf16_weight());
  {
    Tape tape;
    TapeScope scope(tape);
    NoGradGuard no_grad;
    CHECK_THROWS_WITH(linear->forward(zeros({2, 4})),
                      Catch::Contains("Linear.weight") && Catch::Contains("Bf16LoadGuard"));
  }
  // Values bfloat16 holds exactly, as its bits.
  const std::vector<float> values{1.0f, -2.0f, 0.5f, 0.25f, 3.0f, -1.0f,
                                  0.0f, 2.0f,  1.5f, -0.5f, 4.0f, 0.125f};
  linear->set_bf16_weight([&](uint16_t* bits) { round_to_bf16_bits(values.data(), bits, 12); });
  REQUIRE(linear->has_bf16_weight());
  Tape tape;
  TapeScope scope(tape);
  NoGradGuard no_grad;
  const Tensor y = linear->forward(from_data({1, 4}, std::vector<float>{1, 1, 1, 1}));
  CHECK(y.values() == std::vector<double>{-0.25, 4.0, 5.125});
}
