// Tests for ops/grouped_query_attention.cpp (the fused kernels, each query head on its kv head).
#include <span>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/fused_compare.h"
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

namespace test_grouped_query_attention {

// The book's composed form: the kv heads repeated to the query heads, then causal attention.
Tensor composed(std::span<const Tensor> in) {
  const int64_t group = in[0].size(1) / in[1].size(1);
  return causal_attention(in[0], repeat_interleave(in[1], group, 1),
                          repeat_interleave(in[2], group, 1));
}

Tensor fused(std::span<const Tensor> in) {
  return grouped_query_attention(in[0], in[1], in[2]);
}

}  // namespace test_grouped_query_attention

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

GRADCHECK_TEST_CASE("grouped_query_attention",
                    "4 query heads on 2 kv heads, and 3 on 1, dK and dV summed over each group") {
  for (const auto& [h, g] : {std::pair<int64_t, int64_t>{4, 2}, {3, 1}}) {
    INFO("H " << h << ", G " << g);
    auto report = gradcheck(
        "grouped_query_attention",
        [](std::span<const Tensor> in) { return grouped_query_attention(in[0], in[1], in[2]); },
        {random_input({1, h, 3, 2}, 81), random_input({1, g, 3, 2}, 82),
         random_input({1, g, 3, 2}, 83)});
    testing::require_gradcheck(report, "grouped_query_attention");
  }
}

TEST_CASE(
    "grouped_query_attention: float32, the composed ops' values bit for bit and their "
    "gradients within rounding, direct and blocked kernels",
    "[grouped_query_attention]") {
  using namespace test_grouped_query_attention;
  // D 16 with T 40 runs the direct kernel, D 24 the blocked one (several blocks at T 70).
  for (const auto& [t, d] : {std::pair<int64_t, int64_t>{40, 16}, {70, 24}}) {
    INFO("T " << t << ", D " << d);
    const Shape qs{2, 6, t, d}, ks{2, 2, t, d};
    const std::vector<GradcheckInput> in{random_input(qs, 91), random_input(ks, 92),
                                         random_input(ks, 93)};
    const auto up = random_input(qs, 94).values;
    const auto a = testing::run_forward_backward(fused, in, DType::Float32, up);
    const auto b = testing::run_forward_backward(composed, in, DType::Float32, up);
    // The same kernels on the same numbers: each kv head read in place instead of copied.
    CHECK(a.value == b.value);
    CHECK(a.grads[0] == b.grads[0]);
    // dK, dV: the group's heads accumulated into one sum instead of summed after.
    CHECK(testing::max_abs_difference(a.grads[1], b.grads[1]) < 2e-5);
    CHECK(testing::max_abs_difference(a.grads[2], b.grads[2]) < 2e-5);
  }
}

TEST_CASE("grouped_query_attention: the same bits with 1 and 2 threads",
          "[grouped_query_attention][threads]") {
  using namespace test_grouped_query_attention;
  const std::vector<GradcheckInput> in{random_input({1, 4, 33, 16}, 95),
                                       random_input({1, 2, 33, 16}, 96),
                                       random_input({1, 2, 33, 16}, 97)};
  const auto up = random_input({1, 4, 33, 16}, 98).values;
  const auto [one, two] = testing::at_1_and_2_threads(
      [&] { return testing::run_forward_backward(fused, in, DType::Float32, up); });
  CHECK(one.value == two.value);
  CHECK(one.grads == two.grads);
}
