// Tests for apps/train_attention.cpp's command line (CLI11 via cli/cli.h): --help, and each
// malformed value refused by name before any training step.
#ifdef TAPEGRAD_TRAIN_ATTENTION

#include <catch2/catch.hpp>

#include "tests/apps/cli_testing.h"

using namespace tapegrad::testing;

TEST_CASE("train_attention: --help lists every option", "[cli][train_attention]") {
  check_help(TAPEGRAD_TRAIN_ATTENTION,
             {"--model", "--dtype", "--steps", "--lr", "--dot", "--svg", "sa_v1", "200", "0.5"});
}

TEST_CASE("train_attention: a malformed value exits 2 naming the option",
          "[cli][train_attention]") {
  const struct {
    const char* args;
    const char* option;
  } cases[] = {
      {"--lr abc", "--lr"},       {"--lr -0.5", "--lr"},       {"--lr nan", "--lr"},
      {"--lr inf", "--lr"},       {"--steps 1e99", "--steps"}, {"--steps 0", "--steps"},
      {"--steps -5", "--steps"},  {"--steps 2.5", "--steps"},  {"--model gpt", "--model"},
      {"--dtype f16", "--dtype"}, {"--steps", "--steps"},      {"--frobnicate", "--frobnicate"},
  };
  for (const auto& c : cases) {
    check_refused(TAPEGRAD_TRAIN_ATTENTION, c.args, c.option);
    CHECK(run_program(TAPEGRAD_TRAIN_ATTENTION, c.args).status == 2);
  }
}

TEST_CASE("train_attention: options still set the run", "[cli][train_attention]") {
  const ProgramRun run =
      run_program(TAPEGRAD_TRAIN_ATTENTION, "--model sa_v1 --dtype float64 --steps 2 --lr 0.25");
  INFO(run.err);
  CHECK(run.status == 0);
  CHECK(run.out.find("SelfAttention_v1 (float64): SGD lr 0.25, 2 steps") != std::string::npos);
  CHECK(run.out.find("MultiHeadAttention") == std::string::npos);
}

#endif
