// nn::MultiHeadAttention's opt-in record of its attention weights (keep_attention): what it keeps
// and that keeping changes no number. The layers' values against PyTorch are in
// tests/examples/test_chapter3.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/nn/attention.h>
#include <tapegrad/ops/ops.h>

using namespace tapegrad;

namespace {

Tensor random_batch(int64_t B, int64_t T, int64_t C, Generator& g) {
  std::vector<float> values(static_cast<size_t>(B * T * C));
  g.uniform(values.data(), static_cast<int64_t>(values.size()));
  return from_values({B, T, C}, std::vector<double>(values.begin(), values.end()));
}

}  // namespace

TEST_CASE("MultiHeadAttention keep_attention: off by default, then the softmax weights",
          "[nn][attention]") {
  Tape tape;
  TapeScope scope(tape);
  Generator data(7);
  const int64_t B = 2, T = 5, C = 6, H = 3;
  Tensor x = random_batch(B, T, C, data);  // [B, T, C]
  Generator init(123);
  nn::MultiHeadAttention mha(C, C, 8, 0.0, H, false, DType::Float32, init);
  mha.eval();

  CHECK_FALSE(mha.keeps_attention());
  const std::vector<double> plain = mha(x).values();  // [B, T, C]
  CHECK_THROWS_WITH(mha.last_attention(), Catch::Contains("keep_attention(true)"));

  mha.keep_attention(true);
  CHECK_THROWS_WITH(mha.last_attention(), Catch::Contains("no forward"));
  const std::vector<double> kept = mha(x).values();
  CHECK(kept == plain);  // bit for bit: keeping only reads

  const nn::AttentionWeights& w = mha.last_attention();
  REQUIRE(w.shape == Shape({B, H, T, T}));
  REQUIRE(w.values.size() == static_cast<size_t>(B * H * T * T));
  // Recomputed from the layer's projections: softmax(causal(QKᵀ) / √D_h), [B, H, T, T].
  Tensor q = split_heads(mha.W_query(x), H), k = split_heads(mha.W_key(x), H);
  Tensor expected = softmax(
      causal_mask(matmul(q, transpose(k, 2, 3))) / std::sqrt(static_cast<double>(C / H)), -1);
  const std::vector<double> e = expected.values();
  for (size_t i = 0; i < e.size(); ++i) CHECK(w.values[i] == e[i]);
  // Causal rows: each sums to 1 with nothing above the diagonal.
  for (int64_t bh = 0; bh < B * H; ++bh) {
    for (int64_t i = 0; i < T; ++i) {
      double row = 0;
      for (int64_t j = 0; j < T; ++j) {
        const double v = w.values[static_cast<size_t>((bh * T + i) * T + j)];
        if (j > i) CHECK(v == 0.0);
        row += v;
      }
      CHECK(row == Approx(1.0).epsilon(1e-6));
    }
  }
  // sequence(b): batch row b, [H, T, T].
  CHECK(w.sequence(1).size() == static_cast<size_t>(H * T * T));
  CHECK(w.sequence(1)[0] == w.values[static_cast<size_t>(H * T * T)]);
  CHECK_THROWS_WITH(w.sequence(2),
                    Catch::Contains("batch row 2") && Catch::Contains("[2, 3, 5, 5]"));

  mha.keep_attention(false);
  CHECK_THROWS_WITH(mha.last_attention(), Catch::Contains("keep_attention(true)"));
}

TEST_CASE("MultiHeadAttention keep_attention: training mode keeps the weights before dropout",
          "[nn][attention]") {
  Tape tape;
  TapeScope scope(tape);
  Generator data(3);
  Tensor x = random_batch(1, 4, 4, data);  // [1, 4, 4]
  // Two layers drawn alike, each with its own dropout stream drawn alike: keeping on one of them
  // must leave its output and its stream exactly as the other's.
  Generator init_a(5), init_b(5);
  nn::MultiHeadAttention a(4, 4, 4, 0.5, 2, false, DType::Float32, init_a);
  nn::MultiHeadAttention b(4, 4, 4, 0.5, 2, false, DType::Float32, init_b);
  a.keep_attention(true);
  CHECK(a(x).values() == b(x).values());
  CHECK(init_a.random() == init_b.random());           // the same number of dropout draws
  const nn::AttentionWeights& w = a.last_attention();  // [1, 2, 4, 4]
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t i = 0; i < 4; ++i) {
      double row = 0;
      for (int64_t j = 0; j < 4; ++j) row += w.values[static_cast<size_t>((h * 4 + i) * 4 + j)];
      CHECK(row == Approx(1.0).epsilon(1e-6));  // undropped weights: every row sums to 1
    }
  }
}
