// Tests for ops/grouped_query_attention.cpp (composed of repeat_interleave and causal_attention).
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

TEST_CASE("grouped_query_attention: matches the book's GroupedQueryAttention lines under torch",
          "[grouped_query_attention][goldens]") {
  const testing::GoldenFile golden("qwen3", "qwen3.txt");
  Tape tape;
  TapeScope scope(tape);
  auto leaf = [&](const char* name) {
    const auto& g = golden[name];
    return from_values(g.shape, g.values, DType::Float64, true);
  };
  Tensor q = leaf("gqa.q"), k = leaf("gqa.k"), v = leaf("gqa.v");  // H 4, G 2
  Tensor y = grouped_query_attention(q, k, v);
  CHECK(y.shape() == Shape{2, 4, 5, 3});
  // The fused attention sums in another order than torch's composed ops: float64 rounding.
  testing::require_near(y.values(), golden["gqa.y"], DType::Float64, 64, "y");
  tape.backward(y, golden["gqa.dy"].values);
  testing::require_near(q.grad_values(), golden["gqa.dq"], DType::Float64, 64, "dq");
  // The gradient of each kv head sums over the two query heads that share it.
  testing::require_near(k.grad_values(), golden["gqa.dk"], DType::Float64, 64, "dk");
  testing::require_near(v.grad_values(), golden["gqa.dv"], DType::Float64, 64, "dv");
}

TEST_CASE("grouped_query_attention: one kv head per query head is causal_attention",
          "[grouped_query_attention]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor q = from_values({1, 2, 3, 4}, random_input({1, 2, 3, 4}, 1).values, DType::Float64);
  Tensor k = from_values({1, 2, 3, 4}, random_input({1, 2, 3, 4}, 2).values, DType::Float64);
  Tensor v = from_values({1, 2, 3, 4}, random_input({1, 2, 3, 4}, 3).values, DType::Float64);
  CHECK(grouped_query_attention(q, k, v).values() == causal_attention(q, k, v).values());
}

TEST_CASE("grouped_query_attention: bad shapes are named", "[grouped_query_attention][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(
      grouped_query_attention(zeros({1, 3, 4, 2}), zeros({1, 2, 4, 2}), zeros({1, 2, 4, 2})),
      "grouped_query_attention: q [1, 3, 4, 2], k [1, 2, 4, 2], v [1, 2, 4, 2]: the "
      "query heads H 3 must be a multiple of the key/value heads G 2");
  CHECK_THROWS_WITH(
      grouped_query_attention(zeros({1, 4, 4, 2}), zeros({1, 2, 4, 2}), zeros({1, 2, 3, 2})),
      Catch::Contains("k and v must have the same shape"));
  CHECK_THROWS_WITH(
      grouped_query_attention(zeros({1, 4, 4, 2}), zeros({1, 2, 5, 2}), zeros({1, 2, 5, 2})),
      Catch::Contains("q, k and v must agree in B, T and D"));
  CHECK_THROWS_WITH(grouped_query_attention(zeros({4, 4, 2}), zeros({2, 4, 2}), zeros({2, 4, 2})),
                    Catch::Contains("expected q [B, H, T, D] and k, v [B, G, T, D]"));
}

TEST_CASE("grouped_query_attention: float64 gradcheck, 4 query heads on 2 kv heads",
          "[grouped_query_attention][gradcheck]") {
  auto report = gradcheck(
      "grouped_query_attention",
      [](std::span<const Tensor> in) { return grouped_query_attention(in[0], in[1], in[2]); },
      {random_input({1, 4, 3, 2}, 81), random_input({1, 2, 3, 2}, 82),
       random_input({1, 2, 3, 2}, 83)});
  testing::require_gradcheck(report, "repeat_interleave");
}
