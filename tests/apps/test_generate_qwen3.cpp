// Tests for tapegrad-generate --model qwen3 / llama3.2-*: the tiny Hugging Face checkpoint of
// tests/goldens/qwen3/hf (its config.json read by --model qwen3) generates the book's ids, and
// bad options are Errors naming the option.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <tapegrad/text/llm_tokenizers.h>

#include "tests/apps/run_program.h"
#include "tests/temp_dir.h"

using namespace tapegrad::testing;

#ifdef TAPEGRAD_GENERATE
namespace test_generate_qwen3 {

const std::string kQwenDir = std::string(TAPEGRAD_GOLDEN_DIR) + "/qwen3/hf/qwen3_tiny";

// make_hf_goldens.py's qwen3.greedy and qwen3.sampled (temperature 1.5, top-k 20, seed 42).
const std::string kGreedy = "3,41,7,96,0,12,12,12,12,12,12,12,12,12,12,12,12,12,86,86\n";
const std::string kSampled = "3,41,7,96,0,12,24,78,58,19,26,34,34,10,16,16,66,90,90,32\n";

ProgramRun qwen(const std::string& args) {
  return run_program(TAPEGRAD_GENERATE, "--model qwen3 --weights " + kQwenDir +
                                            " --ids 3,41,7,96,0,12 --max-new-tokens 14 " + args);
}

}  // namespace test_generate_qwen3

TEST_CASE(
    "tapegrad-generate --model qwen3: the book's greedy and sampled ids from an HF checkpoint",
    "[cli][generate][qwen3]") {
  using namespace test_generate_qwen3;
  const ProgramRun greedy = qwen("");
  INFO("stderr:\n" << greedy.err);
  REQUIRE(greedy.status == 0);
  CHECK(greedy.out == kGreedy);
  CHECK(greedy.err.find("(6 prompt tokens, 14 generated)") != std::string::npos);
  const ProgramRun sampled = qwen("--temperature 1.5 --top-k 20 --seed 42");
  INFO("stderr:\n" << sampled.err);
  CHECK(sampled.out == kSampled);
  // bf16 weights: the file's second shard is bfloat16 already, the first float32.
  const ProgramRun bf16 = qwen("--dtype bf16");
  INFO("stderr:\n" << bf16.err);
  REQUIRE(bf16.status == 0);
  CHECK(bf16.err.find("bf16 weights (15 linear layers)") != std::string::npos);
  // --eos-id stops before appending it.
  const ProgramRun eos = qwen("--eos-id 12");
  CHECK(eos.out == "3,41,7,96,0,12\n");
}

TEST_CASE("tapegrad-generate --model qwen3 / llama3.2: bad input names the option",
          "[cli][generate][qwen3]") {
  using namespace test_generate_qwen3;
  auto expect = [](const ProgramRun& run, const std::string& prefix, const std::string& part) {
    INFO("stderr:\n" << run.err);
    CHECK(run.status != 0);
    // The model's line may come first; the error is the line naming the program and option.
    CHECK(run.err.find("tapegrad-generate: " + prefix) != std::string::npos);
    CHECK(run.err.find(part) != std::string::npos);
  };
  expect(run_program(TAPEGRAD_GENERATE, "--model qwen3 --weights " + kQwenDir +
                                            " --tokenizer /nowhere/tokenizer.json --prompt Hi"),
         "--tokenizer: ", "/nowhere/tokenizer.json");
  expect(run_program(TAPEGRAD_GENERATE, "--model qwen3 --weights " + kQwenDir + " --ids 1 --chat"),
         "--chat: ", "--prompt");
  expect(run_program(TAPEGRAD_GENERATE, "--weights x.safetensors --chat"), "--chat: ", "Qwen3");
  expect(run_program(TAPEGRAD_GENERATE, "--model qwen3-9b --weights " + kQwenDir + " --ids 1"),
         "--model: ", "qwen3-0.6b");
  expect(qwen("--eos-id 97"), "--eos-id: ", "97");
  expect(run_program(TAPEGRAD_GENERATE, "--model qwen3 --weights " + kQwenDir + " --ids 1,97"),
         "--ids: ", "97");
  // The tiny checkpoint's context is 16 tokens: 17 are refused, not cropped.
  expect(run_program(TAPEGRAD_GENERATE, "--model qwen3 --weights " + kQwenDir +
                                            " --ids 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17"),
         "--ids: ", "17 tokens, longer than qwen3's context of 16 tokens");
  TempDir dir;
  std::filesystem::copy(kQwenDir, dir.path / "q");
  std::filesystem::remove(dir.path / "q" / "model-00001-of-00002.safetensors");
  expect(run_program(TAPEGRAD_GENERATE,
                     "--model qwen3 --weights " + (dir.path / "q").string() + " --ids 1"),
         "--weights: ", "model-00001-of-00002.safetensors is missing");
  std::filesystem::remove(dir.path / "q" / "config.json");
  expect(run_program(TAPEGRAD_GENERATE,
                     "--model qwen3 --weights " + (dir.path / "q").string() + " --ids 1"),
         "--weights: ", "config.json");
}

TEST_CASE("tapegrad-generate --model qwen3: --prompt through Qwen3's tokenizer, text out",
          "[cli][generate][qwen3]") {
  using namespace test_generate_qwen3;
  if (!std::filesystem::exists(tapegrad::default_tokenizer_file("qwen3"))) {
    WARN("skipped: no Qwen3 tokenizer (bash tools/fetch_tokenizers.sh)");
    return;
  }
  // "3+4=" is four one-byte tokens, all inside the tiny checkpoint's 97 ids: "3" is 18, "+" 10,
  // "4" 19, "=" 28, so the greedy continuation is the one --ids gives for them.
  const ProgramRun text = run_program(TAPEGRAD_GENERATE, "--model qwen3 --weights " + kQwenDir +
                                                             " --prompt 3+4= --max-new-tokens 5");
  INFO("stderr:\n" << text.err);
  REQUIRE(text.status == 0);
  const ProgramRun ids =
      run_program(TAPEGRAD_GENERATE,
                  "--model qwen3 --weights " + kQwenDir + " --ids 18,10,19,28 --max-new-tokens 5");
  REQUIRE(ids.status == 0);
  const tapegrad::Qwen3Tokenizer tokenizer =
      tapegrad::Qwen3Tokenizer::from_file(tapegrad::default_tokenizer_file("qwen3"));
  std::vector<int64_t> expected;
  std::stringstream in(ids.out);
  for (std::string item; std::getline(in, item, ',');) expected.push_back(std::stoll(item));
  CHECK(text.out == tokenizer.decode(expected) + "\n");
  CHECK(text.out.rfind("3+4=", 0) == 0);
  // An id the tiny model does not have is an Error naming --prompt.
  const ProgramRun big =
      run_program(TAPEGRAD_GENERATE, "--model qwen3 --weights " + kQwenDir + " --prompt Hello");
  CHECK(big.status != 0);
  CHECK(big.err.find("tapegrad-generate: --prompt: its token") != std::string::npos);
}
#endif
