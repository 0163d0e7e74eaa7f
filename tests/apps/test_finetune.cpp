// Tests for apps/finetune_instruct.cpp and apps/finetune_classifier.cpp, run as programs
// end to end on the committed King James sample (tests/text/data/kjv_sample.txt) with a tiny
// fresh model on the bytes tokenizer (no GPT-2 files needed): the files each writes, the losses
// or accuracies printed before and after, LoRA, --resume, --help, the book's parameter counts,
// and options that are refused naming themselves.
#if defined(TAPEGRAD_FINETUNE_CLASSIFIER) && defined(TAPEGRAD_FINETUNE_INSTRUCT)

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/apps/run_program.h"
#include "tests/examples/chapter3_goldens.h"

namespace fs = std::filesystem;
using tapegrad::testing::chapter3::run_program;

namespace {

using tapegrad::testing::number_after;

const std::string kTinyModel =
    " --tokenizer bytes --context-length 512 --emb-dim 16 --n-heads 2 --n-layers 1 --no-plot";

std::string kjv_sample_path() {
  return std::string(TAPEGRAD_SOURCE_DIR) + "/tests/text/data/kjv_sample.txt";
}

std::string finetune_scratch(const std::string& name) {
  return tapegrad::testing::scratch_dir("finetune_test", name);
}

using Result = tapegrad::testing::CommandResult;

const std::string kInstruct = TAPEGRAD_FINETUNE_INSTRUCT;
const std::string kClassifier = TAPEGRAD_FINETUNE_CLASSIFIER;

Result run(const std::string& program, const std::string& args) {
  int status = -1;
  const std::string command = program + " " + args + " 2>&1";
  std::string output = run_program(command, &status);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, "command: " + command + "\n" + output};
}

// The number printed after `label` (e.g. "Validation loss: ").

// The rest of the line that starts with `label`.
std::string line_after(const std::string& text, const std::string& label) {
  const size_t at = text.find(label);
  REQUIRE(at != std::string::npos);
  const size_t from = at + label.size();
  return text.substr(from, text.find('\n', from) - from);
}

}  // namespace

TEST_CASE(
    "example finetune_instruct: a short run on the KJV sample with losses responses and resume",
    "[examples][finetune]") {
  const std::string out = finetune_scratch("instruct");
  const std::string args = kTinyModel + " --kjv " + kjv_sample_path() +
                           " --count 20 --batch-size 2 --epochs 2 --eval-freq 4 --eval-iter 1"
                           " --lr 1e-3 --max-new-tokens 6 --out " +
                           out;
  const Result r = run(kInstruct, args);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("17 training, 1 validation, 2 test entries") != std::string::npos);
  const double before = number_after(r.output, "Initial losses\n   Training loss: ");
  const double after = number_after(r.output, "Final losses\n   Training loss: ");
  CHECK(std::isfinite(before));
  CHECK(after < before);  // 16 steps at lr 1e-3 on 17 entries: the training loss falls
  CHECK(r.output.find("Ep 1 (Step 000000): Train loss") != std::string::npos);

  const auto data =
      nlohmann::json::parse(tapegrad::testing::read_text_file(out + "/instruction-data.json"));
  CHECK(data.size() == 20);
  const auto responses = nlohmann::json::parse(
      tapegrad::testing::read_text_file(out + "/instruction-data-with-response.json"));
  REQUIRE(responses.size() == 2);
  for (const auto& e : responses) {
    CHECK(e.contains("instruction"));
    CHECK(e.contains("output"));
    CHECK(e["model_response"].is_string());
  }
  CHECK(tapegrad::testing::read_text_file(out + "/loss.csv")
            .rfind("step,train_loss,val_loss,tokens_seen\n", 0) == 0);

  // A finished run resumed: nothing left to train, the same final validation loss from the
  // checkpoint (the training loss is over shuffled batches, drawn afresh).
  const Result again = run(kInstruct, args + " --resume");
  INFO(again.output);
  REQUIRE(again.status == 0);
  CHECK(again.output.find("resumed") != std::string::npos);
  CHECK(number_after(again.output, "Validation loss: ", again.output.find("Final losses")) ==
        number_after(r.output, "Validation loss: ", r.output.find("Final losses")));
  // Another configuration is refused, naming both.
  const Result other = run(kInstruct, args + " --weight-decay 0.2 --resume");
  CHECK(other.status == 1);
  CHECK(other.output.find("a checkpoint of another configuration") != std::string::npos);
}

TEST_CASE("example finetune_instruct: --data in the book's layout and bad input",
          "[examples][finetune]") {
  const std::string out = finetune_scratch("instruct_data");
  fs::create_directories(out);
  std::string json = "[";
  for (int i = 0; i < 12; ++i) {
    json += std::string(i ? "," : "") + "{\"instruction\": \"Repeat the word.\", \"input\": \"w" +
            std::to_string(i) + "\", \"output\": \"w" + std::to_string(i) + "\"}";
  }
  std::ofstream(out + "/data.json") << json << "]";
  const Result r = run(kInstruct, kTinyModel + " --data " + out +
                                      "/data.json --batch-size 2 --epochs 1 "
                                      "--eval-iter 1 --max-new-tokens 3 --out " +
                                      out + "/run");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("10 training, 1 validation, 1 test entries") != std::string::npos);

  std::ofstream(out + "/bad.json")
      << "[{\"instruction\": \"a\", \"output\": \"b\"},\n {\"input\": 1}]";
  const Result bad =
      run(kInstruct, kTinyModel + " --data " + out + "/bad.json --out " + out + "/x");
  CHECK(bad.status == 1);
  CHECK(bad.output.find("entry 1 has no \"instruction\"") != std::string::npos);
  std::ofstream(out + "/broken.json") << "[\n  {\"instruction\": \"a\",, }\n]";
  const Result broken =
      run(kInstruct, kTinyModel + " --data " + out + "/broken.json --out " + out + "/x");
  CHECK(broken.status == 1);
  CHECK(broken.output.find("line 2, column") != std::string::npos);

  const Result help = run(kInstruct, "--help");
  CHECK(help.status == 0);
  CHECK(help.output.find("--allowed-max-length") != std::string::npos);
  const Result lr = run(kInstruct, "--lr abc --out " + out);
  CHECK(lr.status == 2);
  CHECK(lr.output.find("--lr") != std::string::npos);
  const Result epochs = run(kInstruct, "--epochs 0 --out " + out);
  CHECK(epochs.status == 2);
  CHECK(epochs.output.find("--epochs") != std::string::npos);
}

TEST_CASE("example finetune_classifier: the Testament task on the KJV sample with and without LoRA",
          "[examples][finetune]") {
  const std::string out = finetune_scratch("classifier");
  const std::string args = kTinyModel + " --kjv " + kjv_sample_path() +
                           " --per-class 10 --batch-size 2 --epochs 2 --eval-freq 3 --eval-iter 1"
                           " --lr 1e-3";
  const Result r = run(kClassifier, args + " --out " + out);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("14 training, 2 validation, 4 test texts") != std::string::npos);
  const double total = number_after(r.output, "Total parameters: ");
  const double trainable = number_after(r.output, "Trainable parameters: ");
  CHECK(trainable < total);
  CHECK(r.output.find("Accuracy before fine-tuning") != std::string::npos);
  CHECK(r.output.find("Accuracy after fine-tuning") != std::string::npos);
  CHECK(r.output.find("Training accuracy: ") != std::string::npos);
  for (const char* f :
       {"/train.tsv", "/validation.tsv", "/test.tsv", "/metrics.csv", "/checkpoint.safetensors"}) {
    CHECK(fs::exists(out + f));
  }
  const std::string train_tsv = tapegrad::testing::read_text_file(out + "/train.tsv");
  CHECK(std::count(train_tsv.begin(), train_tsv.end(), '\n') == 14);
  CHECK(number_after(r.output, "Loss before fine-tuning: training ") > 0);
  CHECK(number_after(r.output, "Loss after fine-tuning: training ") > 0);

  // A finished run resumed: nothing left to train, the same validation and test results (the
  // training set's batches are drawn afresh, so its last partial batch may differ).
  const Result again = run(kClassifier, args + " --resume --out " + out);
  INFO(again.output);
  REQUIRE(again.status == 0);
  CHECK(again.output.find("resumed") != std::string::npos);
  const std::string val_loss = line_after(r.output, "Loss after fine-tuning: training ");
  const std::string val_loss_again = line_after(again.output, "Loss after fine-tuning: training ");
  CHECK(val_loss.substr(val_loss.find("validation")) ==
        val_loss_again.substr(val_loss_again.find("validation")));
  const Result other = run(kClassifier, args + " --weight-decay 0.2 --resume --out " + out);
  CHECK(other.status == 1);
  CHECK(other.output.find("a checkpoint of another configuration") != std::string::npos);

  const Result lora =
      run(kClassifier, args + " --lora-rank 2 --lora-alpha 2 --out " + out + "_lora");
  INFO(lora.output);
  REQUIRE(lora.status == 0);
  CHECK(number_after(lora.output, "Total parameters: ") > total);  // the adapters
  CHECK(number_after(lora.output, "Trainable parameters: ") < trainable);
  CHECK(lora.output.find("LoRA rank 2, alpha 2") != std::string::npos);
  CHECK(fs::exists(out + "_lora/lora.safetensors"));
  // A rank above a layer's inputs (emb_dim 16) is refused before training.
  const Result big = run(kClassifier, args + " --lora-rank 99 --out " + out + "_big");
  CHECK(big.status == 1);
  CHECK(big.output.find("LoRA rank 99 must be in [1, 16]") != std::string::npos);

  const Result help = run(kClassifier, "--help");
  CHECK(help.status == 0);
  CHECK(help.output.find("--lora-rank") != std::string::npos);
  const Result rank = run(kClassifier, "--lora-rank -1 --out " + out);
  CHECK(rank.status == 2);
  CHECK(rank.output.find("--lora-rank") != std::string::npos);
  fs::create_directories(out);
  std::ofstream(out + "/bad.tsv") << "ham\tfine\nspam no tab\n";
  const Result bad =
      run(kClassifier, kTinyModel + " --data " + out + "/bad.tsv --out " + out + "/x");
  CHECK(bad.status == 1);
  CHECK(bad.output.find("line 2, column 1") != std::string::npos);
  std::ofstream(out + "/labels.tsv") << "ham\tfine\neggs\tnot a class\n";
  const Result labels =
      run(kClassifier, kTinyModel + " --data " + out + "/labels.tsv --out " + out + "/x");
  CHECK(labels.status == 1);
  CHECK(labels.output.find("label 'eggs'") != std::string::npos);
  for (const std::string& program : {kClassifier, kInstruct}) {
    const Result precision = run(program, "--matmul-precision fp8 --out " + out);
    CHECK(precision.status == 2);
    CHECK(precision.output.find("--matmul-precision") != std::string::npos);
  }
}

TEST_CASE("example finetune_classifier: --model qwen3-tiny and llama3-tiny, last block or LoRA",
          "[examples][finetune][qwen3][llama3]") {
  const std::string out = finetune_scratch("classifier_llm");
  const std::string args = " --tokenizer bytes --context-length 512 --no-plot --kjv " +
                           kjv_sample_path() +
                           " --per-class 10 --batch-size 2 --epochs 1 --eval-freq 3 --eval-iter 1"
                           " --lr 1e-3";
  for (const std::string model : {"qwen3-tiny", "llama3-tiny"}) {
    const Result r = run(kClassifier, "--model " + model + args + " --out " + out + model);
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK(r.output.find("a fresh " + model) != std::string::npos);
    CHECK(r.output.find("the last block, the final norm and the head") != std::string::npos);
    const double before = number_after(r.output, "Loss before fine-tuning: training ");
    const double after = number_after(r.output, "Loss after fine-tuning: training ");
    CHECK(std::isfinite(before));
    CHECK(after < before);
    CHECK(fs::exists(out + model + "/checkpoint.safetensors"));
  }
  const Result lora =
      run(kClassifier, "--model qwen3-tiny" + args + " --lora-rank 2 --out " + out + "lora");
  INFO(lora.output);
  REQUIRE(lora.status == 0);
  CHECK(lora.output.find("LoRA rank 2, alpha 16 on 15 Linear layers") != std::string::npos);
  // Bad input names the option.
  auto refused = [&](const std::string& a, const std::string& part) {
    const Result r = run(kClassifier, a + args + " --out " + out + "bad");
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK(r.output.find(part) != std::string::npos);
  };
  refused("--model gpt5", "--model gpt5: not a Qwen3 or Llama 3.2 name");
  refused("--model qwen3-0.6b", "--weights: --model qwen3-0.6b needs its Hugging Face checkpoint");
  refused("--weights /nowhere", "--weights: only with --model");
  refused("--model qwen3-tiny --weights /nowhere", "is a fresh model");
  refused("--model qwen3 --weights /nowhere", "--weights: qwen3_config_from_json");
}

TEST_CASE("example finetune_classifier: --print-counts gives the book's counts",
          "[examples][finetune][124m]") {
  const Result r = run(kClassifier, "--print-counts");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(number_after(r.output, "Total parameters: ") == 124'441'346);
  CHECK(number_after(r.output, "the last block, the final norm and the head: ") == 7'090'946);
  CHECK(number_after(r.output, "LoRA rank 16, alpha 16: ") == 2'666'528);
}

#ifdef TAPEGRAD_TRAIN_GPT
TEST_CASE("example finetune_classifier: starts from a train_gpt checkpoint",
          "[examples][finetune]") {
  const std::string out = finetune_scratch("from_train_gpt");
  const Result pre = run(TAPEGRAD_TRAIN_GPT,
                         "--preset tiny --context-length 128 --emb-dim 16 --n-heads 2 --n-layers 1"
                         " --steps 2 --batch-size 2 --eval-freq 1 --eval-iter 1 --no-plot --data " +
                             kjv_sample_path() + " --out " + out + "/pretrain");
  INFO(pre.output);
  REQUIRE(pre.status == 0);
  const Result r = run(kClassifier, "--checkpoint " + out + "/pretrain/checkpoint.safetensors" +
                                        " --kjv " + kjv_sample_path() +
                                        " --per-class 10 --batch-size 2 --epochs 1 --eval-iter 1"
                                        " --no-plot --out " +
                                        out + "/classifier");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("train_gpt checkpoint") != std::string::npos);
  CHECK(r.output.find("Accuracy after fine-tuning") != std::string::npos);
}
#endif

TEST_CASE("example finetune_instruct: LoRA trains the adapters only", "[examples][finetune]") {
  const std::string out = finetune_scratch("instruct_lora");
  const Result r = run(kInstruct, kTinyModel + " --kjv " + kjv_sample_path() +
                                      " --count 20 --batch-size 2 --epochs 1 --eval-freq 4"
                                      " --eval-iter 1 --lr 1e-3 --max-new-tokens 2 --max-test 1"
                                      " --lora-rank 2 --lora-alpha 4 --matmul-precision highest"
                                      " --out " +
                                      out);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("LoRA rank 2, alpha 4") != std::string::npos);
  CHECK(fs::exists(out + "/lora.safetensors"));
  CHECK(std::isfinite(number_after(r.output, "Final losses\n   Training loss: ")));
}

TEST_CASE("example finetune_instruct: --model qwen3-tiny and llama3-tiny, every weight or LoRA",
          "[examples][finetune][qwen3][llama3]") {
  const std::string out = finetune_scratch("instruct_llm");
  const std::string args = " --tokenizer bytes --context-length 512 --no-plot --kjv " +
                           kjv_sample_path() +
                           " --count 20 --batch-size 2 --epochs 1 --eval-freq 4 --eval-iter 1"
                           " --lr 1e-3 --max-new-tokens 2 --max-test 1";
  for (const std::string model : {"qwen3-tiny", "llama3-tiny"}) {
    const Result r = run(kInstruct, "--model " + model + args + " --out " + out + model);
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK(r.output.find("a fresh " + model) != std::string::npos);
    CHECK(r.output.find("trained: every weight") != std::string::npos);
    const double before = number_after(r.output, "Initial losses\n   Training loss: ");
    const double after = number_after(r.output, "Final losses\n   Training loss: ");
    CHECK(std::isfinite(before));
    CHECK(after < before);
    for (const char* f :
         {"/loss.csv", "/instruction-data-with-response.json", "/checkpoint.safetensors"}) {
      CHECK(fs::exists(out + model + f));
    }
  }
  const Result lora =
      run(kInstruct, "--model llama3-tiny" + args + " --lora-rank 2 --out " + out + "lora");
  INFO(lora.output);
  REQUIRE(lora.status == 0);
  CHECK(lora.output.find("LoRA rank 2, alpha 16 on") != std::string::npos);
  CHECK(fs::exists(out + "lora/lora.safetensors"));
  const Result refused = run(kInstruct, "--weights /nowhere" + args + " --out " + out + "bad");
  CHECK(refused.status == 1);
  CHECK(refused.output.find("--weights: only with --model") != std::string::npos);
}

#endif
