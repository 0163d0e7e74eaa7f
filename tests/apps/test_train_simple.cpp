// Tests for apps/train_simple.cpp (tapegrad-train-simple), run as a program with small
// settings: the book's printout (evaluations, the sample after each epoch) and a falling loss.
#ifdef TAPEGRAD_TRAIN_SIMPLE

#include <catch2/catch.hpp>

#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "tests/apps/cli_testing.h"

using namespace tapegrad::testing;

TEST_CASE("train_simple: --help lists the book's settings", "[cli][train_simple]") {
  check_help(TAPEGRAD_TRAIN_SIMPLE,
             {"--data", "--epochs", "--lr", "--weight-decay", "--eval-freq", "--eval-iter",
              "--prompt", "Every effort moves you", "0.0004"});
}

TEST_CASE("train_simple: a small run prints the book's evaluations and samples",
          "[examples][train_simple]") {
  const std::string data = scratch_path("train_simple/text.txt");
  std::filesystem::create_directories(std::filesystem::path(data).parent_path());
  std::string text;
  const char* lines[] = {"In the beginning was the word, and the word was with the reader.\n",
                         "Every effort moves you, said the painter, and smiled at the canvas.\n",
                         "The quick brown fox jumps over the lazy dog; then it rests.\n"};
  for (int i = 0; i < 60; ++i) text += lines[(i * 7 + i / 3) % 3];
  write_text_file(data, text);
  const ProgramRun run =
      run_program(TAPEGRAD_TRAIN_SIMPLE, "--data " + data +
                                             " --epochs 2 --context-length 16 --emb-dim 16 "
                                             "--n-heads 2 --n-layers 1 --batch-size 4 "
                                             "--eval-iter 2 --lr 0.004 --sample-tokens 10");
  INFO("stdout:\n" << run.out << "\nstderr:\n" << run.err);
  REQUIRE(run.status == 0);
  // "Ep 1 (Step 000000): Train loss 5.610, Val loss 5.598": every eval_freq (5) steps.
  const std::regex eval(
      R"(Ep ([12]) \(Step (\d{6})\): Train loss (\d+\.\d{3}), Val loss (\d+\.\d{3}))");
  std::vector<long> steps;
  std::vector<double> train_losses;
  for (auto it = std::sregex_iterator(run.out.begin(), run.out.end(), eval);
       it != std::sregex_iterator(); ++it) {
    steps.push_back(std::stol((*it)[2]));
    train_losses.push_back(std::stod((*it)[3]));
  }
  REQUIRE(steps.size() >= 3);
  for (size_t i = 0; i < steps.size(); ++i) CHECK(steps[i] == static_cast<long>(5 * i));
  CHECK(run.out.find("Ep 2 (Step ") != std::string::npos);
  CHECK(train_losses.back() < train_losses.front());  // it learns
  // One sample per epoch, each continuing the book's start_context.
  size_t samples = 0;
  for (size_t at = 0; (at = run.out.find("\nEvery effort moves you", at)) != std::string::npos;
       ++at) {
    ++samples;
  }
  CHECK(samples == 2);
  CHECK(run.out.find("Training completed in ") != std::string::npos);
}

#endif
