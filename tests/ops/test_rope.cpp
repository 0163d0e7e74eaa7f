// Tests for ops/rope.cpp: the rope op and compute_rope_params.
#include <cmath>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/kernels/isa_testing.h"
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

namespace test_rope {

Tensor golden_tensor(const testing::GoldenFile& golden, const std::string& name, DType dtype,
                     bool requires_grad = false) {
  const auto& g = golden[name];
  return from_values(g.shape, g.values, dtype, requires_grad);
}

// Rows [first, first + count) of a table as doubles.
std::vector<double> table_rows(const std::vector<float>& table, int64_t d, int64_t first,
                               int64_t count) {
  return {table.begin() + first * d, table.begin() + (first + count) * d};
}

}  // namespace test_rope

TEST_CASE("rope: rotates each (first half, second half) pair by the angle", "[rope]") {
  Tape tape;
  TapeScope scope(tape);
  // D = 2, one position at angle π/2 (cos 0, sin 1): (x1, x2) -> (-x2, x1).
  Tensor x = from_values({1, 1, 1, 2}, std::vector<double>{3.0, 5.0}, DType::Float64);
  Tensor cos = tensor({{0.0, 0.0}, {9.0, 9.0}}, DType::Float64);
  Tensor sin = tensor({{1.0, 1.0}, {9.0, 9.0}}, DType::Float64);
  CHECK(rope(x, cos, sin).values() == std::vector<double>{-5, 3});
  // Position 0 of compute_rope_params is the identity.
  const RopeTables t = compute_rope_params(4, 10000.0, 3);
  CHECK(t.cos.size() == 12);
  CHECK(std::vector<float>(t.cos.begin(), t.cos.begin() + 4) == std::vector<float>(4, 1.0f));
  CHECK(std::vector<float>(t.sin.begin(), t.sin.begin() + 4) == std::vector<float>(4, 0.0f));
}

TEST_CASE("rope: forward and gradients match the book's apply_rope under torch",
          "[rope][goldens]") {
  using test_rope::golden_tensor;
  const testing::GoldenFile golden("qwen3", "qwen3.txt");
  SECTION("float64, gradients to x and to the tables") {
    Tape tape;
    TapeScope scope(tape);
    Tensor x = golden_tensor(golden, "rope.f64.x", DType::Float64, true);
    Tensor c = golden_tensor(golden, "rope.f64.cos", DType::Float64, true);
    Tensor s = golden_tensor(golden, "rope.f64.sin", DType::Float64, true);
    Tensor y = rope(x, c, s);  // x [2, 3, 5, 8] reads 5 of the tables' 6 rows
    testing::require_near(y.values(), golden["rope.f64.y"], DType::Float64, 1, "y");
    tape.backward(y, golden["rope.f64.dy"].values);
    testing::require_near(x.grad_values(), golden["rope.f64.dx"], DType::Float64, 1, "dx");
    testing::require_near(c.grad_values(), golden["rope.f64.dcos"], DType::Float64, 16, "dcos");
    testing::require_near(s.grad_values(), golden["rope.f64.dsin"], DType::Float64, 16, "dsin");
  }
  SECTION("float32, bit for bit") {
    Tape tape;
    TapeScope scope(tape);
    Tensor y = rope(golden_tensor(golden, "rope.f32.x", DType::Float32),
                    golden_tensor(golden, "rope.f32.cos", DType::Float32),
                    golden_tensor(golden, "rope.f32.sin", DType::Float32));
    const int64_t equal =
        testing::require_near(y.values(), golden["rope.f32.y"], DType::Float32, 1, "y");
    CHECK(equal == y.numel());
  }
}

TEST_CASE("compute_rope_params: the book's tables, Qwen3's and Llama 3.2's", "[rope][goldens]") {
  using test_rope::table_rows;
  const testing::GoldenFile golden("qwen3", "qwen3.txt");
  // Bit for bit (0 ulps): torch's pow, cos and sin are SLEEF's, and so are compute_rope_params'
  // (the C library's powf differs in the last bit for the 0.6B config's inv_freq[37], and the
  // angles at position 40959 then differ too).
  // At a level that calls the C library's functions (torch's DEFAULT kernels do too), within
  // an ulp of the SLEEF goldens; the last rows' angles (position × an inv_freq that may differ
  // in its last bit) within 8 ulps of 1.
  const bool libm = testing::active_level_calls_libm();
  const double rows = libm ? 1 : 0, last = libm ? 8 : 0;
  const RopeTables qwen = compute_rope_params(128, 1000000.0, 40960);
  CHECK(qwen.context_length == 40960);
  CHECK(qwen.head_dim == 128);
  testing::require_near(table_rows(qwen.cos, 128, 0, 24), golden["rope_params.qwen3.cos"],
                        DType::Float32, rows, "qwen3 cos");
  testing::require_near(table_rows(qwen.sin, 128, 0, 24), golden["rope_params.qwen3.sin"],
                        DType::Float32, rows, "qwen3 sin");
  testing::require_near(table_rows(qwen.cos, 128, 40959, 1), golden["rope_params.qwen3.cos_last"],
                        DType::Float32, last, "qwen3 cos, last row");
  testing::require_near(table_rows(qwen.sin, 128, 40959, 1), golden["rope_params.qwen3.sin_last"],
                        DType::Float32, last, "qwen3 sin, last row");
  const RopeTables llama = compute_rope_params(64, 500000.0, 8192, RopeFreqConfig{});
  testing::require_near(table_rows(llama.cos, 64, 0, 24), golden["rope_params.llama3.cos"],
                        DType::Float32, rows, "llama3 cos");
  testing::require_near(table_rows(llama.sin, 64, 0, 24), golden["rope_params.llama3.sin"],
                        DType::Float32, rows, "llama3 sin");
  testing::require_near(table_rows(llama.cos, 64, 8191, 1), golden["rope_params.llama3.cos_last"],
                        DType::Float32, last, "llama3 cos, last row");
  testing::require_near(table_rows(llama.sin, 64, 8191, 1), golden["rope_params.llama3.sin_last"],
                        DType::Float32, last, "llama3 sin, last row");
}

TEST_CASE("rope: bad shapes and dtypes are named", "[rope][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor table = zeros({4, 6});
  CHECK_THROWS_WITH(rope(zeros({2, 3, 5}), table, table),
                    "rope: x [2, 3, 5], cos [4, 6], sin [4, 6]: the head dim D 5 must be even");
  CHECK_THROWS_WITH(rope(zeros({2, 5, 6}), table, table),
                    "rope: x [2, 5, 6], cos [4, 6], sin [4, 6]: the tables have 4 positions, "
                    "fewer than x's T 5");
  CHECK_THROWS_WITH(rope(zeros({2, 3, 4}), table, table),
                    Catch::Contains("the tables' last dim must be x's D"));
  CHECK_THROWS_WITH(rope(zeros({2, 3, 6}), table, zeros({4, 4})),
                    Catch::Contains("cos and sin must both be [L, D] tables of one shape"));
  CHECK_THROWS_WITH(rope(zeros({6}), table, table), Catch::Contains("x must be [.., T, D]"));
  CHECK_THROWS_WITH(rope(zeros({2, 3, 6}, DType::Float64), table, table),
                    Catch::Contains("rope") && Catch::Contains("float64"));
  CHECK_THROWS_WITH(compute_rope_params(7, 10000.0, 4),
                    "compute_rope_params: head_dim 7 must be positive and even");
  CHECK_THROWS_WITH(compute_rope_params(8, 10000.0, 0),
                    "compute_rope_params: context_length 0 must be positive");
  CHECK_THROWS_WITH(compute_rope_params(8, -1.0, 4),
                    "compute_rope_params: theta_base -1 must be > 0");
}

GRADCHECK_TEST_CASE("rope", "x [B, H, T, D] and [T, D], and the tables") {
  for (Shape shape : {Shape{2, 3, 4}, Shape{2, 2, 3, 6}}) {
    INFO("x " << shape.str());
    const Shape table{shape[shape.rank() - 2] + 1, shape[shape.rank() - 1]};
    auto report =
        gradcheck("rope", [](std::span<const Tensor> in) { return rope(in[0], in[1], in[2]); },
                  {random_input(shape, 71), random_input(table, 72), random_input(table, 73)});
    testing::require_gradcheck(report, "rope");
  }
}
