// Tests for apps/generate.cpp (tapegrad-generate): --dtype (a bad value names the option; bf16
// on the tests' tiny GPT-2 file generates and reports its first logits' error against float32,
// within 1%, L2: a tiny model of emb_dim 24, so a larger error than the 0.5%
// tests/nn/test_bf16_weights.cpp states for its own), and the tapegrad checkpoints it samples
// from: tapegrad-train-gpt's, a fine-tuned one with LoRA adapters, and a classifier's (refused).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.h>
#include "tests/apps/run_program.h"

using namespace tapegrad::testing;

#ifdef TAPEGRAD_GENERATE
namespace {

using tapegrad::testing::number_after;

const std::string kTinyWeights = std::string(TAPEGRAD_GOLDEN_DIR) + "/gpt2/gpt2_tiny.safetensors";

ProgramRun generate(const std::string& dtype) {
  return run_program(TAPEGRAD_GENERATE, "--weights " + kTinyWeights +
                                            " --n-heads 3 --vocab-dir . --ids 5,6,7 "
                                            "--max-new-tokens 12 --dtype " +
                                            dtype);
}

}  // namespace

TEST_CASE("tapegrad-generate --dtype: a bad value names the option", "[cli][generate][bf16]") {
  const ProgramRun run = generate("bf17");
  INFO("stderr:\n" << run.err);
  CHECK(run.status == 2);
  CHECK(run.err.rfind("tapegrad-generate: --dtype: ", 0) == 0);
  CHECK(run.err.find("bf17") != std::string::npos);
}

TEST_CASE("tapegrad-generate --dtype bf16 reports the first logits' error against float32",
          "[cli][generate][bf16]") {
  const ProgramRun f32 = generate("float32");
  const ProgramRun bf16 = generate("bf16");
  INFO("float32 stdout " << f32.out << "\nbf16 stdout " << bf16.out << "\nstderr:\n" << bf16.err);
  REQUIRE(f32.status == 0);
  REQUIRE(bf16.status == 0);
  CHECK(f32.err.find("bf16 weights") == std::string::npos);
  const double max_abs = number_after(bf16.err, "logits against float32's: max abs error ");
  const double relative = number_after(bf16.err, ", relative error ");
  CHECK(max_abs > 0.0);
  CHECK(relative > 0.0);
  CHECK(relative < 1e-2);
  // The tiny model's greedy margins are wide enough for the same ids.
  CHECK(bf16.out == f32.out);
}

namespace {

// The number of generated tokens stderr reports ("(5 prompt tokens, 10 generated)"), or -1.
int generated_tokens(const std::string& err) {
  const size_t at = err.find(" prompt tokens, ");
  return at == std::string::npos ? -1 : std::atoi(err.c_str() + at + 16);
}

}  // namespace

#ifdef TAPEGRAD_TRAIN_GPT
TEST_CASE("tapegrad-generate samples from a tapegrad-train-gpt checkpoint", "[cli][generate]") {
  const std::string dir = scratch_dir("generate_test", "train_gpt");
  std::string text;
  for (int i = 0; i < 30; ++i) text += "In the beginning was the word, and the word was plain.\n";
  write_text_file(dir + "/text.txt", text);
  const ProgramRun train =
      run_program(TAPEGRAD_TRAIN_GPT,
                  "--preset tiny --context-length 16 --emb-dim 16 --n-heads 2 "
                  "--n-layers 1 --batch-size 2 --steps 3 --eval-freq 3 --eval-iter 1 "
                  "--sample-tokens 2 --no-plot --data " +
                      dir + "/text.txt --out " + dir + "/run");
  INFO("train_gpt stdout:\n" << train.out << "\nstderr:\n" << train.err);
  REQUIRE(train.status == 0);
  const std::string args = "--weights " + dir + "/run/checkpoint.safetensors --max-new-tokens 10";
  const ProgramRun greedy = run_program(TAPEGRAD_GENERATE, args + " --prompt \"In the\"");
  INFO("generate stdout:\n" << greedy.out << "\nstderr:\n" << greedy.err);
  REQUIRE(greedy.status == 0);
  CHECK(greedy.err.find("tapegrad train_gpt checkpoint: 1 layers, emb_dim 16, 2 heads, "
                        "vocabulary 256, context 16, tokenizer bytes") != std::string::npos);
  CHECK(greedy.out.rfind("In the", 0) == 0);  // the prompt, then what the model adds
  CHECK(generated_tokens(greedy.err) == 10);  // the bytes tokenizer has no end-of-text id
  // Sampling with a seed repeats itself; ids in, ids (decoded) out.
  const ProgramRun sampled = run_program(TAPEGRAD_GENERATE, args +
                                                                " --ids 73,110 --temperature "
                                                                "1 --top-k 5 --seed 7");
  INFO("sampled stderr:\n" << sampled.err);
  REQUIRE(sampled.status == 0);
  CHECK(sampled.out.rfind("In", 0) == 0);
  CHECK(run_program(TAPEGRAD_GENERATE, args + " --ids 73,110 --temperature 1 --top-k 5 --seed 7")
            .out == sampled.out);
  // An id the byte model does not have names --ids.
  const ProgramRun outside = run_program(TAPEGRAD_GENERATE, args + " --ids 300");
  CHECK(outside.status == 1);
  CHECK(outside.err.rfind("tapegrad-generate: --ids: 300 is outside the model's vocabulary", 0) ==
        0);
}
#endif

TEST_CASE(
    "tapegrad-generate samples from a fine-tuned checkpoint with LoRA adapters as the "
    "library does, and refuses a classifier's",
    "[cli][generate]") {
  using namespace tapegrad;
  const std::string dir = scratch_dir("generate_test", "finetuned");
  std::filesystem::create_directories(dir);
  // What tapegrad-finetune-instruct --lora-rank 2 saves: the model with its adapters, under its
  // run configuration (adapters' B made non-zero, so that they change the output).
  const nn::GPTConfig cfg{256, 16, 16, 2, 1, 0.0, false};
  manual_seed(5);
  nn::GPTModel model(cfg);
  nn::replace_linear_with_lora(model, 2, 16);
  for (auto& [name, p] : model.named_parameters()) {
    if (name.find("lora") != std::string::npos) p.assign(std::vector<double>(p.numel(), 0.02));
  }
  CheckpointExtras extras;
  extras.metadata = {{"finetune_instruct.config",
                      "tokenizer=bytes vocab_size=256 context_length=16 emb_dim=16 n_heads=2 "
                      "n_layers=1 drop_rate=0 qkv_bias=0 batch_size=8 lr=5e-05 weight_decay=0.1 "
                      "seed=123 entries=10 allowed_max_length=1024 matmul_precision=highest "
                      "lora_rank=2 lora_alpha=16"}};
  save_checkpoint(dir + "/instruct.safetensors", model.named_parameters(), extras);
  const ProgramRun run = run_program(TAPEGRAD_GENERATE, "--weights " + dir +
                                                            "/instruct.safetensors --ids 65,66,67 "
                                                            "--max-new-tokens 8");
  INFO("stdout:\n" << run.out << "\nstderr:\n" << run.err);
  REQUIRE(run.status == 0);
  CHECK(run.err.find("finetune_instruct checkpoint") != std::string::npos);
  CHECK(run.err.find("LoRA rank 2") != std::string::npos);
  model.eval();
  const Ids out = nn::generate(model, Ids(Shape{1, 3}, {65, 66, 67}), 8, 16);
  const std::vector<int64_t> ids(out.values().begin(), out.values().end());
  CHECK(run.out == make_tokenizer("bytes")->decode(ids) + "\n");

  extras.metadata = {{"finetune_classifier.config", "tokenizer=bytes emb_dim=16 n_layers=1"}};
  save_checkpoint(dir + "/classifier.safetensors", model.named_parameters(), extras);
  const ProgramRun refused =
      run_program(TAPEGRAD_GENERATE, "--weights " + dir + "/classifier.safetensors --ids 65");
  CHECK(refused.status == 1);
  CHECK(refused.err.rfind("tapegrad-generate: --weights: ", 0) == 0);
  CHECK(refused.err.find("a classifier, not a language model") != std::string::npos);
}
#endif
