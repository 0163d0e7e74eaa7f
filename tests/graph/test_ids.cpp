// Tests for graph/ids.cpp: construction checks, storage reuse, and torch's print format.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/ids.h>
#include <tapegrad/ops/ops.h>
#include "tests/goldens.h"

using namespace tapegrad;

TEST_CASE("Ids: construction checks the count against the shape", "[ids]") {
  const Ids ids(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(ids.rank() == 2);
  CHECK(ids.numel() == 6);
  CHECK(ids.size(1) == 3);
  CHECK(ids[4] == 5);
  CHECK_THROWS_AS(Ids(Shape{2, 3}, {1, 2, 3}), Error);
  CHECK_THROWS_WITH(Ids(Shape{2, 3}, {1, 2, 3}), Catch::Contains("[2, 3]"));
  CHECK_THROWS_WITH(Ids::from_rows({{1, 2}, {3}}), Catch::Contains("rows of different lengths"));
  const Ids rows = Ids::from_rows({{6109, 3626}, {6109, 1110}});
  CHECK(rows.shape() == Shape{2, 2});
  CHECK(Ids::from_row({1, 2, 3}).shape() == Shape{3});
}

TEST_CASE("Ids: assign reuses the storage and leaves a bad call unchanged", "[ids]") {
  Ids ids(Shape{2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  const int64_t* storage = ids.values().data();
  const std::vector<int64_t> next = {9, 8, 7};
  ids.assign(Shape{1, 3}, next);
  CHECK(ids.values().data() == storage);  // smaller: same buffer
  CHECK(ids.shape() == Shape{1, 3});
  CHECK(std::vector<int64_t>(ids.values().begin(), ids.values().end()) == next);
  CHECK_THROWS_WITH(ids.assign(Shape{2, 2}, next), Catch::Contains("[2, 2]"));
  CHECK(ids.shape() == Shape{1, 3});  // unchanged by the failed assign
  CHECK(ids[2] == 7);
}

TEST_CASE("Ids: str() is torch's print of the same int64 tensor", "[ids][goldens]") {
  const auto& file = testing::golden_file("ids/ids_print.txt");
  int cases = 0;
  for (; file.contains("ids:" + std::to_string(cases)); ++cases) {
    const auto& golden = file["ids:" + std::to_string(cases)];
    INFO("golden ids:" << cases);
    const Ids ids(golden.shape, golden.ints());
    CHECK(ids.str() == file["print:" + std::to_string(cases)].text);
  }
  CHECK(cases == 8);
}

TEST_CASE("Ids: embedding and cross_entropy take Ids", "[ids]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor w = tensor({{0.0, 1.0}, {2.0, 3.0}, {4.0, 5.0}}, DType::Float64);  // [V = 3, C = 2]
  const Ids ids = Ids::from_rows({{2, 0}});
  Tensor e = embedding(w, ids);
  CHECK(e.shape() == Shape{1, 2, 2});
  CHECK(e.values() == embedding(w, ids.values(), ids.shape()).values());
  Tensor logits = tensor({{1.0, 2.0, 0.5}, {0.1, 0.2, 0.3}}, DType::Float64);
  const Ids targets = Ids::from_row({1, 2});
  CHECK(cross_entropy(logits, targets).item() == cross_entropy(logits, targets.values()).item());
}
