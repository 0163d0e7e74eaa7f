// The KJV sample the text tests read (tests/text/data/kjv_sample.txt), as one string.
#pragma once

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

namespace tapegrad::testing {

inline std::string kjv_sample() {
  std::ifstream in(std::string(TAPEGRAD_SOURCE_DIR) + "/tests/text/data/kjv_sample.txt");
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace tapegrad::testing
