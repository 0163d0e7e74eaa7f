// Tests for graph/factory.cpp.
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/random.h>

#include <catch2/catch.hpp>

using namespace tapegrad;

TEST_CASE("factories: another tensor's shape stays valid while the leaf is appended", "[factory]") {
  // zeros(x.shape()) passes a reference into the tape's nodes, which appending the new leaf may
  // move: each factory must read the size from its own leaf (the sanitizer build caught
  // ones/full/rand reading the old one).
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  Generator generator(3);
  for (int i = 0; i < 300; ++i) {  // enough appends to move the node vector several times
    const Tensor made[] = {zeros(x.shape()), ones(x.shape()), full(x.shape(), 2.5),
                           rand(x.shape(), DType::Float32, generator)};
    for (const Tensor& t : made) REQUIRE(t.shape() == Shape{2, 3});
    REQUIRE(made[1].values() == std::vector<double>(6, 1.0));
    REQUIRE(made[2].values() == std::vector<double>(6, 2.5));
  }
}
