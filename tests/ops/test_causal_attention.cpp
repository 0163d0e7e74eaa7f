// Tests for ops/causal_attention.cpp: equal to the composed attention ops, forward and backward,
// across the query/key block boundaries, in both layouts, and with 1 or 2 threads.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/fused_compare.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;
using testing::max_abs_difference;
using testing::run_forward_backward;

namespace {

// The book's ops on [B, H, T, D]: softmax(causal_mask(q kᵀ) / √D) v.
Tensor composed(const Tensor& q, const Tensor& k, const Tensor& v) {
  const double d = static_cast<double>(q.shape()[3]);
  return matmul(softmax(div_scalar(causal_mask(matmul(q, transpose(k, 2, 3))), std::sqrt(d)), -1),
                v);
}

// causal_attention against the composed ops, forward and backward: on [B, H, T, D] when heads is
// 0, else on [B, T, C] split into `heads` (split_heads .. merge_heads around the composed ops);
// q and k drawn from [-qk_range, qk_range].
void check_equal_to_composed(const Shape& shape, DType dtype, uint64_t seed, double tol,
                             int64_t heads = 0, double qk_range = 1.5) {
  const auto q = random_input(shape, seed, -qk_range, qk_range);
  const auto k = random_input(shape, seed + 1, -qk_range, qk_range);
  const auto v = random_input(shape, seed + 2);
  const auto g = random_input(shape, seed + 3);
  auto fused = run_forward_backward(
      [&](std::span<const Tensor> in) { return causal_attention(in[0], in[1], in[2], heads); },
      {q, k, v}, dtype, g.values);
  auto reference = run_forward_backward(
      [&](std::span<const Tensor> in) {
        if (heads == 0) return composed(in[0], in[1], in[2]);
        return merge_heads(composed(split_heads(in[0], heads), split_heads(in[1], heads),
                                    split_heads(in[2], heads)));
      },
      {q, k, v}, dtype, g.values);
  CHECK(max_abs_difference(fused.value, reference.value) < tol);
  for (int i = 0; i < 3; ++i) {
    INFO("gradient of input " << i);
    CHECK(max_abs_difference(fused.grads[static_cast<size_t>(i)],
                             reference.grads[static_cast<size_t>(i)]) < tol);
  }
}

}  // namespace

TEST_CASE("causal_attention: small exact case", "[causal_attention]") {
  Tape tape;
  TapeScope scope(tape);
  // T = 2, D = 1: row 0 sees key 0 only (out = v0 = 4); row 1 scores [ln 3 · 1, ln 3 · 0] give
  // weights [0.75, 0.25], so out = 0.75 · 4 + 0.25 · 8 = 5.
  Tensor q = from_values({1, 1, 2, 1}, std::vector<double>{5.0, std::log(3.0)}, DType::Float64);
  Tensor k = from_values({1, 1, 2, 1}, std::vector<double>{1.0, 0.0}, DType::Float64);
  Tensor v = from_values({1, 1, 2, 1}, std::vector<double>{4.0, 8.0}, DType::Float64);
  const std::vector<double> out = causal_attention(q, k, v).values();
  CHECK(max_abs_difference(out, {4.0, 5.0}) < 1e-15);
}

TEST_CASE("causal_attention: equals the composed ops, forward and backward", "[causal_attention]") {
  SECTION("small shapes, float64 and float32") {
    check_equal_to_composed({2, 3, 5, 4}, DType::Float64, 10, 1e-13);
    check_equal_to_composed({2, 3, 5, 4}, DType::Float32, 20, 2e-6);
    check_equal_to_composed({1, 1, 1, 3}, DType::Float64, 30, 1e-14);
  }
  SECTION("T = 300 crosses the query (32) and key (256) blocks: online softmax and skipping") {
    check_equal_to_composed({1, 2, 300, 8}, DType::Float64, 40, 1e-12);
    check_equal_to_composed({1, 1, 300, 16}, DType::Float32, 50, 1e-5);
  }
}

TEST_CASE(
    "causal_attention: the direct kernel (T <= 128, D a multiple of 64 bytes) equals the "
    "composed ops",
    "[causal_attention]") {
  // D = 16 floats is one vector (8 query rows per step), 32 two, 48 three (4 rows, and √48 is not
  // a power of two: the scores are divided), 64 four; 8 and 16 doubles are one and two. T = 37
  // and 13 leave partial row blocks and partial key vectors; T = 128 is the largest direct T.
  SECTION("float32") {
    check_equal_to_composed({2, 2, 37, 16}, DType::Float32, 200, 2e-6);
    check_equal_to_composed({1, 2, 64, 32}, DType::Float32, 210, 2e-6);
    check_equal_to_composed({1, 1, 29, 48}, DType::Float32, 220, 2e-6);
    check_equal_to_composed({1, 1, 128, 64}, DType::Float32, 230, 5e-6);
    check_equal_to_composed({1, 1, 1, 16}, DType::Float32, 240, 2e-6);
  }
  SECTION("float64") {
    check_equal_to_composed({2, 2, 13, 8}, DType::Float64, 250, 1e-13);
    check_equal_to_composed({1, 2, 70, 16}, DType::Float64, 260, 1e-13);
  }
  SECTION("[B, T, C] read in place (rows C apart), float32") {
    check_equal_to_composed({2, 21, 64}, DType::Float32, 270, 2e-6, /*heads=*/4);  // D = 16
  }
}

TEST_CASE("causal_attention: [B, T, C] with num_heads equals split_heads .. merge_heads",
          "[causal_attention]") {
  check_equal_to_composed({2, 7, 12}, DType::Float64, 60, 1e-14, /*heads=*/3, /*qk_range=*/1.0);
}

TEST_CASE("causal_attention: the same bits with 1 and 2 threads, run to run",
          "[causal_attention][threads]") {
  const Shape shape{2, 4, 96, 16};
  const auto q = random_input(shape, 71), k = random_input(shape, 72), v = random_input(shape, 73);
  const auto g = random_input(shape, 74);
  auto run = [&] {
    return run_forward_backward(
        [](std::span<const Tensor> in) { return causal_attention(in[0], in[1], in[2]); }, {q, k, v},
        DType::Float32, g.values);
  };
  set_num_threads(1);
  const auto one = run();
  set_num_threads(2);
  const auto two = run();
  const auto again = run();
  set_num_threads(1);
  // Each (batch, head) pair is computed whole by one thread: the split does not change a bit.
  CHECK(one.value == two.value);
  CHECK(one.grads == two.grads);
  CHECK(two.value == again.value);
  CHECK(two.grads == again.grads);
}

TEST_CASE("causal_attention: shape errors name the op and the tensors",
          "[causal_attention][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor q = zeros({1, 2, 3, 4});
  q.set_name("q");
  CHECK_THROWS_WITH(causal_attention(q, zeros({1, 2, 3, 5}), zeros({1, 2, 3, 4})),
                    "causal_attention: q \"q\" [1, 2, 3, 4], k [1, 2, 3, 5], v [1, 2, 3, 4]: q, k "
                    "and v must have the same shape");
  CHECK_THROWS_WITH(causal_attention(zeros({2, 3}), zeros({2, 3}), zeros({2, 3})),
                    Catch::Contains("expected 4-D [B, H, T, D] tensors"));
  CHECK_THROWS_WITH(causal_attention(q, q, q, 2), Catch::Contains("with num_heads, expected 3-D"));
  Tensor x = zeros({1, 3, 10});
  CHECK_THROWS_WITH(causal_attention(x, x, x, 4),
                    Catch::Contains("C 10 is not divisible by num_heads 4"));
  CHECK_THROWS_WITH(causal_attention(q, q, zeros({1, 2, 3, 4}, DType::Float64)),
                    Catch::Contains("causal_attention"));
}

GRADCHECK_TEST_CASE("causal_attention", "[B, H, T, D] and [B, T, C] with heads") {
  uint64_t seed = 100;
  for (const Shape& shape : {Shape{1, 1, 3, 2}, Shape{2, 2, 4, 3}}) {
    INFO(shape.str());
    auto report = gradcheck(
        "causal_attention",
        [](std::span<const Tensor> in) { return causal_attention(in[0], in[1], in[2]); },
        {random_input(shape, ++seed), random_input(shape, ++seed), random_input(shape, ++seed)});
    testing::require_gradcheck(report, "causal_attention");
  }
  auto report = gradcheck(
      "causal_attention",
      [](std::span<const Tensor> in) { return causal_attention(in[0], in[1], in[2], 2); },
      {random_input({2, 4, 6}, 110), random_input({2, 4, 6}, 111), random_input({2, 4, 6}, 112)});
  testing::require_gradcheck(report, "causal_attention");
}

GRADCHECK_TEST_CASE("causal_attention", "the direct kernel (D = 8 doubles, T = 11)") {
  const Shape shape{1, 2, 11, 8};
  auto report =
      gradcheck("causal_attention",
                [](std::span<const Tensor> in) { return causal_attention(in[0], in[1], in[2]); },
                {random_input(shape, 130), random_input(shape, 131), random_input(shape, 132)});
  testing::require_gradcheck(report, "causal_attention");
}

GRADCHECK_TEST_CASE("causal_attention", "T = 300 across blocks (fast mode: random projections)") {
  GradcheckOptions options;
  options.fast_mode = true;
  options.seed = 7;
  const Shape shape{1, 1, 300, 4};
  auto report = gradcheck(
      "causal_attention",
      [](std::span<const Tensor> in) { return causal_attention(in[0], in[1], in[2]); },
      {random_input(shape, 120), random_input(shape, 121), random_input(shape, 122)}, options);
  testing::require_gradcheck(report, "causal_attention");
}
