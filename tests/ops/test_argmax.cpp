// Tests for ops/argmax.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

TEST_CASE("argmax: first index on ties, NaN wins, keepdim shape", "[argmax]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({{1.0, 3.0, 3.0}, {NAN, 5.0, NAN}});
  const Ids a = argmax(x, -1);
  CHECK(a.shape() == Shape{2});
  CHECK(std::vector<int64_t>(a.values().begin(), a.values().end()) == std::vector<int64_t>{1, 0});
  CHECK(argmax(x, 1, true).shape() == Shape{2, 1});
  CHECK(argmax(x, 0).values()[1] == 1);
  const int32_t nodes = tape.size();
  argmax(x, 0);
  CHECK(tape.size() == nodes);  // nothing recorded
  CHECK_THROWS_WITH(argmax(x, 2), Catch::Contains("argmax") && Catch::Contains("[2, 3]") &&
                                      Catch::Contains("out of range"));
  CHECK_THROWS_WITH(argmax(zeros(Shape{2, 0}), 1), Catch::Contains("size 0"));
}

TEST_CASE("argmax: matches torch along every dim", "[argmax][goldens]") {
  const testing::GoldenFile golden("selection", "selection.txt");
  Tape tape;
  TapeScope scope(tape);
  const auto& gx = golden["argmax.x"];
  Tensor x = from_values(gx.shape, gx.values);
  for (int dim : {0, 1, 2, -1}) {
    for (bool keepdim : {false, true}) {
      const std::string name = "argmax.dim" + std::to_string(dim) + (keepdim ? ".keepdim" : "");
      INFO(name);
      const Ids ids = argmax(x, dim, keepdim);
      CHECK(ids.shape() == golden[name].shape);
      CHECK(std::vector<int64_t>(ids.values().begin(), ids.values().end()) == golden[name].ints());
    }
  }
}
