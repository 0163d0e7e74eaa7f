// Every installed program's errors begin with its name and name the option at fault: a folder
// that cannot be made, a file that cannot be written or read (cli::run, cli::create_directories),
// a count too large to generate, an empty value, a number out of its range (with a bound a
// person can read).
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "tests/apps/run_program.h"

using namespace tapegrad::testing;

// (Unused in a build without the programs, TAPEGRAD_BUILD_EXAMPLES=OFF.)
namespace {

// A regular file, so that "<it>/sub" cannot be created: ENOTDIR.
[[maybe_unused]] std::string regular_file(const std::string& name) {
  const std::string path = scratch_path("program_errors/" + name);
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  write_text_file(path, "a file, not a folder\n");
  return path;
}

// `run` failed (exit `status`) with one line on stderr that begins with `message`.
[[maybe_unused]] void check_error(const ProgramRun& run, int status, const std::string& message) {
  INFO("stdout:\n" << run.out << "\nstderr:\n" << run.err);
  CHECK(run.status == status);
  CHECK(run.err.rfind(message, 0) == 0);
  const std::string program = message.substr(0, message.find(':') + 2);
  CHECK(run.err.find(program, program.size()) == std::string::npos);  // named once, not twice
}

}  // namespace

#ifdef TAPEGRAD_TRAIN_GPT
TEST_CASE("program errors: tapegrad-train-gpt --out under a regular file names the option",
          "[cli][train_gpt]") {
  const std::string file = regular_file("train_gpt_out");
  const std::string data = scratch_path("program_errors/train_gpt.txt");
  std::string text;
  for (int i = 0; i < 20; ++i) text += "In the beginning was the word, and the word was plain.\n";
  write_text_file(data, text);
  const ProgramRun run =
      run_program(TAPEGRAD_TRAIN_GPT,
                  "--preset tiny --context-length 8 --emb-dim 8 --n-heads 2 --n-layers 1 "
                  "--steps 1 --no-plot --data " +
                      data + " --out " + file + "/sub");
  check_error(
      run, 2,
      "tapegrad-train-gpt: --out: cannot create directory " + file + "/sub: Not a directory\n");
}
#endif

#ifdef TAPEGRAD_TRAIN_ATTENTION
TEST_CASE("program errors: tapegrad-train-attention --dot and --svg name their option",
          "[cli][train_attention]") {
  const std::string file = regular_file("train_attention_dot");
  check_error(run_program(TAPEGRAD_TRAIN_ATTENTION, "--steps 1 --dot " + file + "/a.dot"), 2,
              "tapegrad-train-attention: --dot: ");
  check_error(run_program(TAPEGRAD_TRAIN_ATTENTION, "--steps 1 --svg " + file + "/a.svg"), 2,
              "tapegrad-train-attention: --svg: ");
}
#endif

#ifdef TAPEGRAD_HAVE_DOT_TOOL
TEST_CASE("program errors: tapegrad-dot -o, --svg and --png name their option",
          "[cli][tapegrad-dot]") {
  const std::string file = regular_file("tapegrad_dot");
  for (const std::string option : {"-o", "--svg", "--png"}) {
    check_error(run_program(TAPEGRAD_DOT_TOOL, "--model causal " + option + " " + file + "/x"), 1,
                "tapegrad-dot: " + option + ": ");
  }
}
#endif

#ifdef TAPEGRAD_GENERATE
TEST_CASE("program errors: tapegrad-generate --weights names the option", "[cli][generate]") {
  const std::string missing = scratch_path("program_errors/no-such-model.safetensors");
  check_error(run_program(TAPEGRAD_GENERATE, "--ids 1,2 --weights " + missing), 1,
              "tapegrad-generate: --weights: ");
  check_error(run_program(TAPEGRAD_GENERATE, "--ids 1,x --weights " + missing), 1,
              "tapegrad-generate: --ids: ");
}

TEST_CASE(
    "program errors: tapegrad-generate refuses an empty --ids and a --max-new-tokens "
    "that cannot fit, naming the option and the limit",
    "[cli][generate]") {
  const std::string tiny = std::string(TAPEGRAD_GOLDEN_DIR) + "/gpt2/gpt2_tiny.safetensors";
  check_error(run_program(TAPEGRAD_GENERATE, "--n-heads 3 --weights " + tiny + " --ids \"\""), 1,
              "tapegrad-generate: --ids: no ids given\n");
  const ProgramRun huge = run_program(
      TAPEGRAD_GENERATE, "--n-heads 3 --ids 1 --max-new-tokens 1000000000000 --weights " + tiny);
  check_error(huge, 2, "tapegrad-generate: --max-new-tokens: ");
  CHECK(huge.err.find("must be in [0, 16777216], got 1000000000000") != std::string::npos);
}

TEST_CASE("program errors: range errors print bounds a person can read", "[cli][generate]") {
  for (const std::string option : {"--temperature", "--top-k", "--n-heads", "--max-new-tokens"}) {
    const ProgramRun run = run_program(TAPEGRAD_GENERATE, "--weights x --ids 1 " + option + " -1");
    INFO(option << " -1: " << run.err);
    CHECK(run.status == 2);
    CHECK(run.err.rfind("tapegrad-generate: " + option + ": must be ", 0) == 0);
    CHECK(run.err.find("17976931348623157") == std::string::npos);  // max() in full
    CHECK(run.err.size() < 160);
  }
}
#endif

#ifdef TAPEGRAD_FINETUNE_CLASSIFIER
TEST_CASE(
    "program errors: tapegrad-finetune-classifier --out under a regular file names the "
    "option",
    "[cli][finetune]") {
  const std::string file = regular_file("classifier_out");
  const std::string data = scratch_path("program_errors/classifier.tsv");
  std::string tsv;
  for (int i = 0; i < 10; ++i) tsv += "ham\thello there friend\nspam\twin a prize now\n";
  write_text_file(data, tsv);
  check_error(run_program(TAPEGRAD_FINETUNE_CLASSIFIER,
                          "--tokenizer bytes --context-length 8 --emb-dim 4 --n-heads 1 --data " +
                              data + " --out " + file + "/sub"),
              1,
              "tapegrad-finetune-classifier: --out: cannot create directory " + file +
                  "/sub: Not a directory\n");
}

TEST_CASE("program errors: --help shows every option's default", "[cli][finetune]") {
  const ProgramRun run = run_program(TAPEGRAD_FINETUNE_CLASSIFIER, "--help");
  INFO(run.out);
  CHECK(run.status == 0);
  CHECK(run.out.find("--classes TEXT=ham,spam") != std::string::npos);
  CHECK(run.out.find("--lr FLOAT:POSITIVE=5e-05") != std::string::npos);
  CHECK(run.out.find("--threads INT:IN [1, 256]=1") != std::string::npos);
}
#endif

#ifdef TAPEGRAD_GENERATE
TEST_CASE("program errors: tapegrad-generate --help shows the defaults", "[cli][generate]") {
  const ProgramRun run = run_program(TAPEGRAD_GENERATE, "--help");
  INFO(run.out);
  CHECK(run.status == 0);
  CHECK(run.out.find("--max-new-tokens INT:IN [0, 16777216]=25") != std::string::npos);
  CHECK(run.out.find("--prompt TEXT=Every effort moves you") != std::string::npos);
}
#endif

#ifdef TAPEGRAD_FINETUNE_INSTRUCT
TEST_CASE("program errors: tapegrad-finetune-instruct --kjv and --out name their option",
          "[cli][finetune]") {
  const std::string missing = scratch_path("program_errors/no-such-kjv.txt");
  const std::string fresh = "--tokenizer bytes --context-length 8 --emb-dim 4 --n-heads 1 ";
  check_error(run_program(TAPEGRAD_FINETUNE_INSTRUCT, fresh + "--kjv " + missing + " --out " +
                                                          scratch_path("program_errors/ft")),
              1, "tapegrad-finetune-instruct: --kjv " + missing + ": no such file\n");
}
#endif

#ifdef TAPEGRAD_TRAIN_SIMPLE
TEST_CASE("program errors: tapegrad-train-simple --data and --n-heads name their option",
          "[cli][train_simple]") {
  const std::string missing = scratch_path("program_errors/no-such-text.txt");
  check_error(run_program(TAPEGRAD_TRAIN_SIMPLE, "--data " + missing), 1,
              "tapegrad-train-simple: --data " + missing + ": no such file\n");
  const std::string folder = scratch_path("program_errors");
  check_error(run_program(TAPEGRAD_TRAIN_SIMPLE, "--data " + folder), 1,
              "tapegrad-train-simple: --data " + folder + ": is a directory\n");
  check_error(run_program(TAPEGRAD_TRAIN_SIMPLE, "--n-heads 3"), 1,
              "tapegrad-train-simple: --n-heads: must divide --emb-dim\n");
}
#endif
