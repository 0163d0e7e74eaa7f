// Fine-tuning tools: requires_grad_, replacing a child, trainable counts, frozen weights costing
// no backward product, appendix E's LoRA and chapter 6's classifier, against the book's torch
// numbers (tests/goldens/finetune).
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <tapegrad/kernels/gemm/gemm.h>
#include <tapegrad/tapegrad.h>
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

namespace {

// make_finetune_goldens.py's TINY and IN_IDX.
const nn::GPTConfig kFinetuneTiny{50, 8, 8, 2, 2, 0.0, true};
const Ids kInIdx = Ids::from_rows({{6, 49, 0, 17, 33, 2}, {41, 8, 8, 30, 12, 25}});
const Ids kLabels = Ids::from_row({0, 1});

// The book's chapter-6 recipe up to the new head: built with seed 123, everything frozen, then
// torch.manual_seed(123) and out_head = Linear(emb_dim, 2).
nn::GPTModel chapter6_model(const nn::GPTConfig& cfg) {
  manual_seed(123);
  nn::GPTModel model(cfg);
  model.requires_grad_(false);
  manual_seed(123);
  model.replace_module("out_head", nn::Linear(cfg.emb_dim, 2));
  return model;
}

std::vector<double> train(nn::GPTModel& model, double lr, int steps) {
  AdamW optimizer(model.parameters(), {.lr = lr, .weight_decay = 0.1});
  Tape tape;
  TapeScope scope(tape);
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) {
    losses.push_back(classifier::train_step(model, kInIdx, kLabels, optimizer, tape));
  }
  return losses;
}

std::vector<std::string> keys(const nn::StateDict& sd) {
  std::vector<std::string> out;
  for (const auto& [name, p] : sd) out.push_back(name);
  return out;
}

}  // namespace

TEST_CASE("requires_grad_ and trainable counts", "[finetune][module]") {
  manual_seed(123);
  nn::GPTModel model(kFinetuneTiny);
  const int64_t total = model.num_parameters();
  CHECK(model.num_trainable_parameters() == total);
  model.requires_grad_(false);
  CHECK(model.num_trainable_parameters() == 0);
  CHECK(model.trainable_parameters().empty());
  model.final_norm.requires_grad_(true);
  CHECK(model.num_trainable_parameters() == 2 * kFinetuneTiny.emb_dim);
  CHECK(model.num_parameters() == total);
  // An optimiser over frozen parameters only is an error; frozen ones among trainable are fine.
  model.requires_grad_(false);
  CHECK_THROWS_WITH(AdamW(model.parameters()), Catch::Contains("requires a gradient"));
  CHECK_THROWS_WITH(AdamW(model.trainable_parameters()), Catch::Contains("empty parameter list"));
  model.out_head.requires_grad_(true);
  CHECK_NOTHROW(AdamW(model.parameters()));
}

TEST_CASE("replace_module keeps the place, the names and the order", "[finetune][module]") {
  manual_seed(123);
  nn::GPTModel model(kFinetuneTiny);
  const std::vector<std::string> before = keys(model.state_dict());
  model.replace_module("out_head", nn::Linear(kFinetuneTiny.emb_dim, 2));  // with a bias now
  std::vector<std::string> expected = before;
  expected.push_back("out_head.bias");
  CHECK(keys(model.state_dict()) == expected);
  CHECK(model.out_head.out_features() == 2);
  CHECK(model.out_head.name() == "out_head");
  CHECK(model.out_head.weight.name() == "out_head.weight");
  CHECK(model.out_head.bias.name() == "out_head.bias");
  CHECK(model.state_dict().at("out_head.weight") == model.out_head.weight);
  Tape tape;
  TapeScope scope(tape);
  CHECK(model(kInIdx).shape() == Shape{2, 6, 2});

  // Wrong shape, wrong kind, no such child: an Error, and nothing changes.
  CHECK_THROWS_WITH(
      model.replace_module("out_head", nn::Linear(7, 2)),
      Catch::Contains("replace_module(\"out_head\")") && Catch::Contains("takes 8 input features"));
  CHECK_THROWS_WITH(model.replace_module("out_head", nn::LayerNorm(8)),
                    Catch::Contains("a LayerNorm cannot stand in for a Linear"));
  CHECK_THROWS_WITH(model.replace_module("head", nn::Linear(8, 2)),
                    Catch::Contains("no child \"head\"") && Catch::Contains("\"out_head\""));
  CHECK(keys(model.state_dict()) == expected);
  CHECK(model.out_head.out_features() == 2);
}

TEST_CASE("frozen weights cost no gradient product in backward", "[finetune][module]") {
  manual_seed(1);
  nn::Linear layer(16, 8);
  std::vector<float> xs(4 * 16, 0.5f);
  auto backward_products = [&](bool weight_trainable) {
    layer.requires_grad_(weight_trainable);
    Tape tape;
    TapeScope scope(tape);
    Tensor x = from_data(Shape{4, 16}, xs, /*requires_grad=*/true);
    Tensor loss = sum(layer(x));
    const uint64_t before = gemm_count().products;
    tape.backward(loss);
    return gemm_count().products - before;
  };
  CHECK(backward_products(true) == 2);  // dX and dW
  layer.weight.zero_grad();
  CHECK(backward_products(false) == 1);  // dX only
  for (double g : layer.weight.grad_values()) CHECK(g == 0.0);

  // The chapter-6 recipe with only the head trainable: one product in all (the head's dW);
  // nothing before the head needs a gradient, so no other backward runs.
  nn::GPTModel model = chapter6_model(kFinetuneTiny);
  Tape tape;
  TapeScope scope(tape);
  Tensor loss = classifier::calc_loss_batch(kInIdx, kLabels, model);
  const uint64_t before = gemm_count().products;
  tape.backward(loss);
  CHECK(gemm_count().products - before == 1);
  for (const auto& [name, p] : model.named_parameters()) {
    INFO(name);
    CHECK(p.has_grad() == name.starts_with("out_head."));
  }
}

TEST_CASE("a frozen prefix of a Sequential is not kept on the tape", "[finetune][module]") {
  // The same weights twice: everything trainable, and the chapter-6 recipe (block 0 frozen and
  // fed the frozen embeddings: trf_blocks runs it on its scratch tapes).
  nn::GPTModel all = chapter6_model(kFinetuneTiny);
  all.requires_grad_(true);
  nn::GPTModel recipe = chapter6_model(kFinetuneTiny);
  recipe.trf_blocks[recipe.trf_blocks.size() - 1].requires_grad_(true);
  recipe.final_norm.requires_grad_(true);
  recipe.out_head.requires_grad_(true);
  struct Run {
    double loss;
    int32_t nodes;
    std::vector<std::vector<double>> grads;  // the recipe's trainable parameters'
  };
  auto run = [&](nn::GPTModel& model) {
    Tape tape;
    TapeScope scope(tape);
    Tensor loss = classifier::calc_loss_batch(kInIdx, kLabels, model);
    tape.backward(loss);
    Run r{loss.item(), tape.size(), {}};
    for (const auto& [name, p] : model.named_parameters()) {
      if (name.starts_with("trf_blocks.1.") || name.starts_with("final_norm.") ||
          name.starts_with("out_head.")) {
        r.grads.push_back(p.grad_values());
      }
    }
    return r;
  };
  const Run a = run(all), b = run(recipe);
  CHECK(b.loss == a.loss);  // the same ops on the same values, bit for bit
  REQUIRE(b.grads.size() == a.grads.size());
  REQUIRE(!a.grads.empty());
  for (size_t i = 0; i < a.grads.size(); ++i) CHECK(b.grads[i] == a.grads[i]);
  // Block 0's nodes are not on the step's tape: one constant leaf stands for its output.
  const int32_t block_nodes = a.nodes - b.nodes;
  CHECK(block_nodes > 20);
  for (const auto& [name, p] : recipe.named_parameters()) {
    if (name.starts_with("trf_blocks.0.")) CHECK(!p.has_grad());
  }
  // A second step on the same scratch tapes gives the same loss.
  CHECK(run(recipe).loss == a.loss);
}

TEST_CASE("chapter 6: the classifier's logits and AdamW steps match torch", "[finetune][goldens]") {
  const testing::GoldenFile goldens("finetune", "finetune_goldens.txt");
  nn::GPTModel model = chapter6_model(kFinetuneTiny);
  model.trf_blocks[model.trf_blocks.size() - 1].requires_grad_(true);
  model.final_norm.requires_grad_(true);
  testing::require_near(model.out_head.weight.values(), goldens["clf_head_weight"], DType::Float32,
                        0, "the new head's weight: torch's draws");
  testing::require_near(model.out_head.bias.values(), goldens["clf_head_bias"], DType::Float32, 0,
                        "the new head's bias");
  {
    Tape tape;
    TapeScope scope(tape);
    const Tensor logits = classifier::last_token_logits(model, kInIdx);  // [2, 2]
    CHECK(logits.shape() == Shape{2, 2});
    testing::require_near(logits.values(), goldens["clf_logits"], DType::Float32, 16,
                          "last-token logits");
  }
  testing::require_near(train(model, 5e-5, 3), goldens["clf_losses"], DType::Float32, 16,
                        "losses of 3 AdamW steps (lr 5e-5, weight decay 0.1)");
  testing::require_near(model.final_norm.scale.values(), goldens["clf_final_norm_scale"],
                        DType::Float32, 16, "final_norm.scale after 3 steps");
}

TEST_CASE("LoRA: the book's layers, A as torch draws it, losses as torch", "[finetune][lora]") {
  const testing::GoldenFile goldens("finetune", "finetune_goldens.txt");
  nn::GPTModel model = chapter6_model(kFinetuneTiny);
  const std::vector<std::string> plain = keys(model.state_dict());
  // 2 blocks x (4 attention + 2 feed-forward) Linears, and the head.
  CHECK(nn::replace_linear_with_lora(model, 2, 4.0) == 13);
  const nn::StateDict sd = model.state_dict();
  testing::require_near(sd.at("trf_blocks.0.att.W_query.lora.A").values(), goldens["lora_A_first"],
                        DType::Float32, 0, "the first A");
  testing::require_near(sd.at("trf_blocks.1.ff.layers.2.lora.A").values(), goldens["lora_A_ff"],
                        DType::Float32, 0, "an A in the last block's feed-forward");
  testing::require_near(sd.at("out_head.lora.A").values(), goldens["lora_A_head"], DType::Float32,
                        0, "the head's A (the last drawn)");
  CHECK(sd.contains("trf_blocks.0.att.W_query.linear.weight"));
  CHECK(sd.contains("trf_blocks.0.att.W_query.linear.bias"));
  CHECK(sd.at("out_head.lora.B").shape() == Shape{2, 2});
  CHECK(sd.at("trf_blocks.0.att.W_query.lora.A").name() == "trf_blocks.0.att.W_query.lora.A");
  CHECK(model.num_trainable_parameters() ==
        static_cast<int64_t>(goldens["lora_trainable"].values[0]));

  testing::require_near(train(model, 8e-4, 3), goldens["lora_losses"], DType::Float32, 16,
                        "losses of 3 AdamW steps (lr 8e-4)");
  testing::require_near(model.state_dict().at("out_head.lora.B").values(), goldens["lora_B_head"],
                        DType::Float32, 64, "the head's B after 3 steps");
  std::vector<double> logits;
  {
    Tape tape;
    TapeScope scope(tape);
    logits = classifier::last_token_logits(model, kInIdx).values();
    testing::require_near(logits, goldens["lora_logits"], DType::Float32, 64, "logits after");
  }

  // Export: merged weights in the plain layout load into a plain model with the same outputs.
  const nn::StateDict merged = nn::merged_state_dict(model);
  CHECK(keys(merged) == plain);
  nn::GPTModel plain_model = chapter6_model(kFinetuneTiny);
  plain_model.load_state_dict(merged);
  {
    Tape tape;
    TapeScope scope(tape);
    testing::require_near(classifier::last_token_logits(plain_model, kInIdx).values(),
                          goldens["lora_logits"], DType::Float32, 64, "the merged plain model");
  }
  // merge / unmerge in place: forward unchanged within rounding, the weight back after unmerge.
  const std::vector<double> w = model.state_dict().at("out_head.linear.weight").values();
  nn::merge_lora(model);
  {
    Tape tape;
    TapeScope scope(tape);
    testing::require_near(classifier::last_token_logits(model, kInIdx).values(),
                          goldens["lora_logits"], DType::Float32, 64, "merged in place");
  }
  nn::unmerge_lora(model);
  const std::vector<double> back = model.state_dict().at("out_head.linear.weight").values();
  for (size_t i = 0; i < w.size(); ++i) CHECK(std::abs(back[i] - w[i]) <= 1e-6);

  // The adapters alone, saved and loaded into a fresh LoRA model.
  const std::string path =
      (std::filesystem::temp_directory_path() / "tapegrad_test_lora.safetensors").string();
  nn::save_lora(model, path);
  nn::GPTModel fresh = chapter6_model(kFinetuneTiny);
  nn::replace_linear_with_lora(fresh, 2, 4.0);
  nn::load_lora(fresh, path);
  CHECK(fresh.state_dict().at("out_head.lora.B").values() ==
        model.state_dict().at("out_head.lora.B").values());
  CHECK(nn::lora_state_dict(fresh).size() == 26);
  nn::GPTModel other = chapter6_model(kFinetuneTiny);
  nn::replace_linear_with_lora(other, 1, 4.0);
  CHECK_THROWS_WITH(nn::load_lora(other, path), Catch::Contains("size mismatch"));
  std::filesystem::remove(path);
}

TEST_CASE("LoRA: bad ranks are clear errors and change nothing", "[finetune][lora]") {
  CHECK_THROWS_WITH(nn::LoRALayer(8, 4, 0, 1.0), Catch::Contains("LoRA rank 0 must be in [1, 8]"));
  CHECK_THROWS_WITH(nn::LoRALayer(8, 4, 9, 1.0), Catch::Contains("LoRA rank 9 must be in [1, 8]"));
  manual_seed(123);
  nn::GPTModel model(kFinetuneTiny);
  const std::vector<std::string> before = keys(model.state_dict());
  CHECK_THROWS_WITH(nn::replace_linear_with_lora(model, 0, 16.0), Catch::Contains("LoRA rank 0"));
  CHECK_THROWS_WITH(nn::replace_linear_with_lora(model, 9, 16.0),
                    Catch::Contains("LoRA rank 9 must be in [1, 8]"));
  CHECK(keys(model.state_dict()) == before);
}

TEST_CASE("GPT_CONFIG_124M with qkv_bias and a 2-class head: the book's counts",
          "[finetune][lora][124m]") {
  nn::GPTConfig cfg = nn::GPT_CONFIG_124M;
  cfg.qkv_bias = true;
  cfg.drop_rate = 0.0;
  nn::GPTModel model = chapter6_model(cfg);
  CHECK(model.num_parameters() == 124'441'346);
  // Chapter 6: the last block and the final norm trainable again, with the head.
  model.trf_blocks[model.trf_blocks.size() - 1].requires_grad_(true);
  model.final_norm.requires_grad_(true);
  CHECK(model.num_trainable_parameters() == 7'090'946);
  // Appendix E: everything frozen, then LoRA rank 16, alpha 16 on every Linear.
  model.requires_grad_(false);
  nn::replace_linear_with_lora(model, 16, 16.0);
  CHECK(model.num_trainable_parameters() == 2'666'528);
}
