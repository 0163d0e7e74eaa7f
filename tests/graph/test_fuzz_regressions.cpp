// Replays the kept fuzz inputs of tests/goldens/fuzz/ exactly as the fuzz target runs them
// (tools/fuzz/fuzz_model.h), with no crash, no other exception and no sanitizer report (the
// suite also runs under ASan + UBSan):
//   hand_*    hostile files made by make_fuzz_inputs.py,
//   corpus_*  units the fuzzer generated that reach the loader's deepest checks,
//   (those must be rejected with a clean tapegrad::Error, leaving the model untouched)
//   valid_*   inputs behind a fixed finding that are valid checkpoints: they must load.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/io/safetensors.h>

#include "tests/compare.h"
#include "tools/fuzz/fuzz_model.h"

using namespace tapegrad;

namespace {

using tapegrad::testing::parameter_bits;

}  // namespace

TEST_CASE("fuzz regressions: every kept input loads or is rejected with a clean Error", "[fuzz]") {
  const std::filesystem::path dir = std::filesystem::path(TAPEGRAD_GOLDEN_DIR) / "fuzz";
  std::vector<std::filesystem::path> inputs;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".py" && entry.path().extension() != ".md") {
      inputs.push_back(entry.path());
    }
  }
  std::sort(inputs.begin(), inputs.end());
  CHECK(inputs.size() >= 34);
  for (const auto& path : inputs) {
    const std::string name = path.filename().string();
    INFO(name);
    const std::vector<uint8_t> bytes = read_whole_file(path.string());
    // As the fuzz target runs it: only tapegrad::Error may come out.
    int loaded = -1;
    CHECK_NOTHROW(loaded = fuzz::load_both_ways(bytes));
    if (name.rfind("valid_", 0) == 0) {
      CHECK(loaded == 2);
      continue;
    }
    CHECK(loaded == 0);
    // And the model is left as it was.
    fuzz::FuzzModel model;
    const std::vector<uint8_t> w = parameter_bits(model.w), b = parameter_bits(model.b);
    const std::vector<uint64_t> rng = model.generator.state();
    CheckpointExtras extras = model.extras();
    std::string message;
    try {
      load_checkpoint_bytes(bytes, name, model.named(), extras);
    } catch (const Error& e) {
      message = e.what();
    }
    CHECK(message.rfind(name + ": ", 0) == 0);
    CHECK(parameter_bits(model.w) == w);
    CHECK(parameter_bits(model.b) == b);
    CHECK(model.generator.state() == rng);
    CHECK(model.adam.step_count() == 0);
  }
}
