// Tests for ops/dropout.cpp: bit-exact with torch's CPU dropout, mask kept for backward.
#include <cmath>
#include <limits>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/attention_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;
using testing::attention_golden;
using testing::bits_of;
using testing::golden_tensor;

TEST_CASE("dropout: the book's Dropout(0.5) on ones(6, 6) after manual_seed(123)",
          "[dropout][golden]") {
  Tape tape;
  TapeScope scope(tape);
  const std::vector<uint64_t> want =
      bits_of(attention_golden("dropout.book.ones").values, DType::Float32);
  Generator g(123);
  CHECK(bits_of(dropout(ones({6, 6}), 0.5, true, g).values(), DType::Float32) == want);
  // The default generator, as torch.manual_seed(123) then nn.Dropout(0.5)(example).
  manual_seed(123);
  CHECK(bits_of(dropout(ones({6, 6}), 0.5, true).values(), DType::Float32) == want);
}

TEST_CASE("dropout: the book's causal attention weights after manual_seed(123)",
          "[dropout][golden]") {
  Tape tape;
  TapeScope scope(tape);
  Generator g(123);
  const std::vector<uint64_t> want =
      bits_of(attention_golden("dropout.book.attn_weights").values, DType::Float32);
  Tensor y = dropout(golden_tensor("causal.attn_weights"), 0.5, true, g);
  CHECK(bits_of(y.values(), DType::Float32) == want);
  // The whole pipeline from torch's scaled scores, through this softmax (which matches torch's
  // weights exactly on these values) and causal_mask.
  g.manual_seed(123);
  Tensor weights = softmax(causal_mask(golden_tensor("causal.scaled_scores")), -1);
  CHECK(bits_of(dropout(weights, 0.5, true, g).values(), DType::Float32) == want);
}

TEST_CASE("dropout: other shapes, p and dtypes match torch bit for bit, forward and backward",
          "[dropout][golden]") {
  struct Case {
    const char* name;
    double p;
    uint64_t seed;
  };
  // f32.p015: 1 / float32(0.85) differs from float32(1 / 0.85), so the scale's arithmetic shows.
  for (const Case& c :
       {Case{"f32.p015", 0.15, 7}, Case{"f64.p01", 0.1, 0}, Case{"f32.p09", 0.9, 11}}) {
    INFO(c.name);
    const std::string prefix = std::string("dropout.") + c.name;
    Tape tape;
    TapeScope scope(tape);
    Tensor x = golden_tensor(prefix + ".x", /*requires_grad=*/true);
    Generator g(c.seed);
    Tensor y = dropout(x, c.p, true, g);
    CHECK(bits_of(y.values(), y.dtype()) ==
          bits_of(attention_golden(prefix + ".y").values, y.dtype()));
    tape.backward(y, attention_golden(prefix + ".g").values);
    CHECK(x.grad_values() == attention_golden(prefix + ".grad").values);
  }
}

TEST_CASE("dropout: eval mode and p == 0 return x itself and draw nothing", "[dropout]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(ones({3, 4}));
  Generator g(5);
  const std::vector<uint64_t> before = g.state();
  const int32_t nodes = tape.size();
  for (auto [p, training] : {std::pair{0.5, false}, std::pair{0.0, true}, std::pair{0.0, false}}) {
    Tensor y = dropout(x, p, training, g);
    CHECK(y.id() == x.id());
  }
  CHECK(tape.size() == nodes);
  CHECK(g.state() == before);
}

TEST_CASE("dropout: p below 0 or at least 1 is an error naming the op, the tensor and p",
          "[dropout][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = ones({6, 6});
  x.set_name("attn_weights");
  Generator g(1);
  const std::vector<uint64_t> before = g.state();
  CHECK_THROWS_WITH(dropout(x, 1.0, true, g),
                    "dropout: x \"attn_weights\" [6, 6]: p must be in [0, 1), got 1.000000");
  CHECK_THROWS_WITH(dropout(x, -0.1, true, g),
                    "dropout: x \"attn_weights\" [6, 6]: p must be in [0, 1), got -0.100000");
  CHECK_THROWS_WITH(dropout(x, 1.5, false, g), Catch::Contains("p must be in [0, 1), got 1.5"));
  CHECK_THROWS_WITH(dropout(x, std::nan(""), true, g), Catch::Contains("p must be in [0, 1)"));
  CHECK(tape.size() == 1);
  CHECK(g.state() == before);
}

TEST_CASE("dropout: the same seed gives the same mask, the stream moves on between calls",
          "[dropout]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = ones({4, 8, 8}, DType::Float64);
  Generator g1(42), g2(42);
  const std::vector<double> a = dropout(x, 0.3, true, g1).values();
  CHECK(dropout(x, 0.3, true, g2).values() == a);
  const std::vector<double> b = dropout(x, 0.3, true, g1).values();
  CHECK(b != a);
  int kept = 0;
  for (double v : a) {
    CHECK((v == 0.0 || v == 1.0 / (1.0 - 0.3)));
    kept += v != 0.0;
  }
  CHECK(kept > 256 * 0.55);  // about 70% of 256 kept
  CHECK(kept < 256 * 0.85);
}

TEST_CASE("dropout: backward reuses the forward's mask and draws nothing", "[dropout]") {
  Tape tape;
  TapeScope scope(tape);
  std::vector<double> xs(2 * 3 * 5 * 5);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 1.0 + static_cast<double>(i % 7);
  Tensor x = requires_grad(from_values({2, 3, 5, 5}, xs, DType::Float32));
  Generator g(99);
  Tensor y = dropout(x, 0.25, true, g);
  const std::vector<uint64_t> after_forward = g.state();
  std::vector<double> dy(xs.size(), 3.0);
  tape.backward(y, dy);
  CHECK(g.state() == after_forward);
  const std::vector<double> yv = y.values(), grad = x.grad_values();
  const float scale = 1.0f / 0.75f;
  for (size_t i = 0; i < xs.size(); ++i) {
    const bool kept = yv[i] != 0.0;  // x is never 0 here
    CHECK(grad[i] == (kept ? static_cast<double>(3.0f * scale) : 0.0));
    CHECK(yv[i] == (kept ? static_cast<double>(static_cast<float>(xs[i]) * scale) : 0.0));
  }
}

GRADCHECK_TEST_CASE("dropout", "ranks 1-4, one mask per evaluation (reseeded generator)") {
  uint64_t seed = 70;
  for (const Shape& shape : {Shape{7}, Shape{3, 4}, Shape{2, 3, 4}, Shape{2, 2, 3, 3}}) {
    for (double p : {0.2, 0.5}) {
      INFO(shape.str() << " p " << p);
      auto report = gradcheck("dropout",
                              [p](std::span<const Tensor> in) {
                                Generator g(1234);
                                return dropout(in[0], p, true, g);
                              },
                              {random_input(shape, ++seed)});
      testing::require_gradcheck(report, "dropout");
    }
  }
}
