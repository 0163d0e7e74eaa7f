// Tests for examples/cnn.cpp: a short run learns (its per-epoch lines, the final accuracy above
// chance), --dot draws one cluster per layer, bad options are refused by name, and docs/cnn.md
// shows the program as it is (docs_blocks builds and runs that copy).
//
// The examples are built together (examples/CMakeLists.txt): cnn lies beside custom_op.
#ifdef TAPEGRAD_CUSTOM_OP

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "tests/apps/cli_testing.h"
#include "tests/apps/run_program.h"

using namespace tapegrad::testing;

namespace test_cnn {
const std::string kCnn = std::filesystem::path(TAPEGRAD_CUSTOM_OP).replace_filename("cnn").string();
}  // namespace test_cnn

TEST_CASE("cnn example: a short run learns and draws one cluster per layer", "[cnn][examples]") {
  const std::string dot = scratch_path("cnn_example.dot");
  const ProgramRun run = run_program(
      test_cnn::kCnn,
      "--epochs 2 --train-size 600 --test-size 100 --batch-size 20 --dot \"" + dot + "\"");
  INFO("stdout:\n" << run.out << "\nstderr:\n" << run.err);
  REQUIRE(run.status == 0);
  CHECK(run.out.find("epoch 1/2: train loss ") != std::string::npos);
  CHECK(run.out.find("epoch 2/2: train loss ") != std::string::npos);
  // 10 classes: chance is 10%; two short epochs already reach far beyond it.
  CHECK(number_after(run.out, "final test accuracy: ") > 50.0);
  const std::string drawing = read_text_file(dot);
  for (const char* layer :
       {"conv1", "relu1", "pool1", "conv2", "relu2", "pool2", "flatten", "fc"}) {
    INFO("layer " << layer);
    CHECK(drawing.find(std::string("label=<<b>") + layer + "</b>>") != std::string::npos);
  }
}

TEST_CASE("cnn example: options are listed and bad values refused by name", "[cnn][examples]") {
  check_help(test_cnn::kCnn, {"--epochs", "--train-size", "--test-size", "--batch-size", "--lr",
                              "--seed", "--dot"});
  check_refused(test_cnn::kCnn, "--epochs 0", "--epochs");
  check_refused(test_cnn::kCnn, "--lr nan", "--lr");
  check_refused(test_cnn::kCnn, "--batch-size -3", "--batch-size");
  const ProgramRun run =
      run_program(test_cnn::kCnn, "--epochs 1 --train-size 10 --dot /nonexistent/dir/cnn.dot");
  INFO("stdout:\n" << run.out << "\nstderr:\n" << run.err);
  CHECK(run.status != 0);
  CHECK(run.err.find("cnn: --dot: cannot write /nonexistent/dir/cnn.dot") != std::string::npos);
}

TEST_CASE("cnn example: docs/cnn.md shows examples/cnn.cpp as it is", "[cnn][examples][docs]") {
  const std::string program =
      read_text_file(std::string(TAPEGRAD_SOURCE_DIR) + "/examples/cnn.cpp");
  const std::string page = read_text_file(std::string(TAPEGRAD_SOURCE_DIR) + "/docs/cnn.md");
  REQUIRE(!program.empty());
  CHECK(page.find("```cpp\n" + program + "```\n") != std::string::npos);
}

#endif
