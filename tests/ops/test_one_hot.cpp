// Tests for ops/one_hot.cpp: torch.nn.functional.one_hot, inferred or given class counts.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/goldens.h"

#include <catch2/catch.hpp>
#include <limits>

using namespace tapegrad;

TEST_CASE("one_hot: torch goldens (inferred classes, given classes, a 0-dim id)",
          "[one_hot][goldens]") {
  const testing::GoldenFile& golden = testing::golden_file("padding/padding.txt");
  Tape tape;
  TapeScope scope(tape);
  for (const auto& [name, classes] : std::vector<std::pair<std::string, int64_t>>{
           {"one_hot", -1}, {"one_hot_classes", 5}, {"one_hot_0d", 3}}) {
    INFO(name);
    const testing::GoldenTensor& ids = golden[name + ".ids"];
    const testing::GoldenTensor& want = golden[name + ".y"];
    for (const DType dtype : {DType::Float32, DType::Float64}) {
      const Tensor y = one_hot(Ids(ids.shape, ids.ints()), classes, dtype);
      CHECK(y.shape() == want.shape);
      CHECK(y.dtype() == dtype);
      CHECK(y.values() == want.values);
      CHECK_FALSE(y.requires_grad());
    }
  }
}

TEST_CASE("one_hot: ids out of range and bad class counts", "[one_hot][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(one_hot(Ids::from_row({0, 3}), 3),
                    "one_hot: id 3 at position 1 of ids [2] is out of range for 3 classes");
  CHECK_THROWS_WITH(one_hot(Ids::from_row({-1}), 2), Catch::StartsWith("one_hot: id -1"));
  CHECK_THROWS_WITH(one_hot(Ids::from_row({0}), -2),
                    "one_hot: num_classes must be -1 or >= 0, got -2");
  CHECK_THROWS_WITH(one_hot(Ids(Shape{0}, {})),
                    Catch::StartsWith("one_hot: cannot infer the number of classes"));
  CHECK_THROWS_WITH(one_hot(Ids::from_row({std::numeric_limits<int64_t>::max()})),
                    Catch::EndsWith("is too large to count classes by"));
  CHECK(one_hot(Ids(Shape{0}, {}), 4).shape() == Shape{0, 4});
}
