// Every registered op has a float64 gradient check and a row in ops/DERIVATIVES.md: adding an op
// is its file, its test and its row, and this file fails when one of the three is missing.
#include <tapegrad/graph/op.h>

#include <fstream>
#include <iterator>

#include "tests/ops/gradcheck_registry.h"

namespace tapegrad::testing {
std::set<std::string>& gradchecked_ops() {
  static std::set<std::string> ops;
  return ops;
}
}  // namespace tapegrad::testing

TEST_CASE("every registered op has a gradcheck", "[registry]") {
  const auto& checked = tapegrad::testing::gradchecked_ops();
  std::string missing;
  for (const tapegrad::OpDef* op : tapegrad::registered_ops()) {
    if (!checked.count(op->name)) missing += std::string(" ") + op->name;
  }
  INFO("ops without a GRADCHECK_TEST_CASE (or INFERENCE_ONLY_TEST_CASE):" << missing);
  CHECK(missing.empty());
}

TEST_CASE("every gradcheck names a registered op", "[registry]") {
  for (const std::string& op : tapegrad::testing::gradchecked_ops()) {
    INFO(op);
    CHECK(tapegrad::find_registered_op(op) != nullptr);
  }
}

TEST_CASE("every registered op has a row in ops/DERIVATIVES.md", "[registry]") {
  std::ifstream file(TAPEGRAD_SOURCE_DIR "/ops/DERIVATIVES.md");
  REQUIRE(file.good());
  const std::string table((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  for (const tapegrad::OpDef* op : tapegrad::registered_ops()) {
    INFO(op->name);
    CHECK(table.find("\n| " + std::string(op->name) + " |") != std::string::npos);
  }
}

TEST_CASE("the registry holds each op once, the library's ops among them", "[registry]") {
  std::set<std::string> names;
  for (const tapegrad::OpDef* op : tapegrad::registered_ops()) {
    INFO(op->name);
    CHECK(names.insert(op->name).second);
    CHECK(op->backward != nullptr);
  }
  // The test binary links the whole library, so ops it never calls are registered too.
  for (const char* op : {"add", "matmul", "softmax", "layer_norm", "causal_attention"}) {
    INFO(op);
    CHECK(names.count(op) == 1);
  }
}
