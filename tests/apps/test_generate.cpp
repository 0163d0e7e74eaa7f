// Tests for apps/generate.cpp (tapegrad-generate) with --dtype: a bad value names the
// option; bf16 on the tests' tiny GPT-2 file generates and reports its first logits' error
// against float32 (within 1%, L2: a tiny model of emb_dim 24, so a larger error than the
// 0.5% tests/nn/test_bf16_weights.cpp states for its own).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "tests/apps/run_program.h"

using namespace tapegrad::testing;

#ifdef TAPEGRAD_GENERATE
namespace {

const std::string kTiny = std::string(TAPEGRAD_GOLDEN_DIR) + "/gpt2/gpt2_tiny.safetensors";

ProgramRun generate(const std::string& dtype) {
  return run_program(TAPEGRAD_GENERATE, "--weights " + kTiny +
                                            " --n-heads 3 --vocab-dir . --ids 5,6,7 "
                                            "--max-new-tokens 12 --dtype " +
                                            dtype);
}

// The number after `key` in `text`, or -1 when absent.
double number_after(const std::string& text, const std::string& key) {
  const size_t at = text.find(key);
  return at == std::string::npos ? -1.0 : std::strtod(text.c_str() + at + key.size(), nullptr);
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
#endif
