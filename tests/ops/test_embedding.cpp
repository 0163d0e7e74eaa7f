// Tests for ops/embedding.cpp.
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

TEST_CASE("embedding: small exact case, repeated ids accumulate", "[embedding]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor w = from_values({3, 2}, std::vector<double>{0, 1, 2, 3, 4, 5}, DType::Float32, true);
  const std::vector<int64_t> ids{2, 0, 2};
  Tensor y = embedding(w, ids, Shape{3});
  CHECK(y.shape() == Shape{3, 2});
  CHECK(y.values() == std::vector<double>{4, 5, 0, 1, 4, 5});
  tape.backward(y, std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(w.grad_values() == std::vector<double>{3, 4, 0, 0, 6, 8});
}

TEST_CASE("embedding: ids of rank 0 to 3 give ids_shape + [C]", "[embedding]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor w = tensor({{0.0, 1.0}, {2.0, 3.0}, {4.0, 5.0}});
  const std::vector<int64_t> one{1}, six{0, 1, 2, 2, 1, 0};
  Tensor y0 = embedding(w, one, Shape{});
  CHECK(y0.shape() == Shape{2});
  CHECK(y0.values() == std::vector<double>{2, 3});
  CHECK(embedding(w, six, Shape{2, 3}).shape() == Shape{2, 3, 2});
  Tensor y3 = embedding(w, six, Shape{1, 2, 3});
  CHECK(y3.shape() == Shape{1, 2, 3, 2});
  CHECK(y3.values() == std::vector<double>{0, 1, 2, 3, 4, 5, 4, 5, 2, 3, 0, 1});
}

TEST_CASE("embedding: forward and gradient match PyTorch", "[embedding][golden]") {
  const testing::GoldenFile golden("reductions", "embedding.txt");
  Tape tape;
  TapeScope scope(tape);
  Tensor w = from_values(golden["weight"].shape, golden["weight"].values, DType::Float64, true);
  const std::vector<int64_t> ids = golden["ids"].ints();
  Tensor y = embedding(w, ids, golden["ids"].shape);
  CHECK(y.shape() == golden["y"].shape);
  testing::require_close(y.values(), golden["y"], 1e-12, "y");
  tape.backward(y, golden["dy"].values);
  testing::require_close(w.grad_values(), golden["dweight"], 1e-12, "dweight");
}

TEST_CASE("embedding: bad ids and shapes are errors", "[embedding][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor w = zeros({10, 4});
  w.set_name("tok_emb");
  const std::vector<int64_t> ids{1, 2, 3, 4, 5, 12}, negative{-1}, four{1, 2, 3, 4};
  CHECK_THROWS_WITH(embedding(w, ids, Shape{2, 3}),
                    "embedding: weight \"tok_emb\" [10, 4]: id 12 at ids[1, 2] is out of range "
                    "[0, 10)");
  CHECK_THROWS_WITH(
      embedding(w, ids, Shape{6}),
      "embedding: weight \"tok_emb\" [10, 4]: id 12 at ids[5] is out of range [0, 10)");
  CHECK_THROWS_WITH(embedding(w, negative, Shape{}),
                    "embedding: weight \"tok_emb\" [10, 4]: id -1 at ids is out of range [0, 10)");
  CHECK_THROWS_WITH(
      embedding(w, four, Shape{2, 3}),
      "embedding: weight \"tok_emb\" [10, 4]: 4 ids for ids shape [2, 3] (6 elements)");
  CHECK_THROWS_WITH(embedding(w, four, Shape{1, 1, 1, 1, 1, 1, 2, 2}),
                    "embedding: ids of shape [1, 1, 1, 1, 1, 1, 2, 2] would give an output of rank "
                    "9 (at most 8)");
  CHECK_THROWS_WITH(embedding(zeros({10}), four, Shape{4}),
                    "embedding: weight [10]: expected a weight of shape [V, C]");
  CHECK(tape.size() == 2);  // nothing recorded by the failed calls
}

GRADCHECK_TEST_CASE("embedding", "w.r.t. weight, ids of rank 0-3 with repeats") {
  struct Case {
    Shape ids_shape;
    std::vector<int64_t> ids;
  };
  for (const Case& c : {Case{{}, {3}}, Case{{5}, {1, 1, 4, 0, 1}}, Case{{2, 3}, {2, 2, 0, 4, 2, 1}},
                        Case{{2, 2, 2}, {0, 4, 4, 4, 1, 0, 3, 3}}}) {
    INFO("ids " << c.ids_shape.str());
    auto report =
        gradcheck("embedding",
                  [&](std::span<const Tensor> in) { return embedding(in[0], c.ids, c.ids_shape); },
                  {random_input({5, 3}, 61)});
    testing::require_gradcheck(report, "embedding");
  }
}
