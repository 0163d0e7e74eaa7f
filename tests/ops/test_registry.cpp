// Every registered op has a float64 gradient check (the registry's guard, like a static op count).
#include "ops/registry.h"

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
  for (std::string_view op : tapegrad::registered_ops()) {
    if (!checked.count(std::string(op))) missing += " " + std::string(op);
  }
  INFO("ops without a GRADCHECK_TEST_CASE:" << missing);
  CHECK(missing.empty());
}

TEST_CASE("every gradcheck names a registered op", "[registry]") {
  for (const std::string& op : tapegrad::testing::gradchecked_ops()) {
    INFO(op);
    CHECK(tapegrad::is_registered_op(op));
  }
}

TEST_CASE("every registered op has a row in ops/DERIVATIVES.md", "[registry]") {
  std::ifstream file(TAPEGRAD_SOURCE_DIR "/ops/DERIVATIVES.md");
  REQUIRE(file.good());
  const std::string table((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  for (std::string_view op : tapegrad::registered_ops()) {
    INFO(op);
    CHECK(table.find("\n| " + std::string(op) + " |") != std::string::npos);
  }
}
