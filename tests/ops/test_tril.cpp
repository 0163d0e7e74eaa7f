// Tests for ops/tril.cpp.
#include <cstdint>
#include <limits>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/attention_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;
using testing::attention_golden;
using testing::bits_of;
using testing::golden_tensor;

TEST_CASE("tril: small exact case", "[tril]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = tril(tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}, {7.0, 8.0, 9.0}}));
  CHECK(y.values() == std::vector<double>{1, 0, 0, 4, 5, 0, 7, 8, 9});
  CHECK(tril(tensor({{1.0, 2.0}, {3.0, 4.0}}), -1).values() == std::vector<double>{0, 0, 3, 0});
}

TEST_CASE("tril: torch's values on a batched non-square block for several diagonals",
          "[tril][golden]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = golden_tensor("tri.x");  // [2, 3, 5], float64
  for (int64_t k : {-1, 0, 2}) {
    INFO("diagonal " << k);
    CHECK(tril(x, k).values() == attention_golden("tril.k" + std::to_string(k)).values);
  }
  // Diagonals beyond the matrix keep everything or nothing.
  CHECK(tril(x, std::numeric_limits<int64_t>::max()).values() == x.values());
  CHECK(tril(x, 4).values() == x.values());
  CHECK(tril(x, std::numeric_limits<int64_t>::min()).values() == std::vector<double>(30, 0.0));
  CHECK(tril(x, -3).values() == std::vector<double>(30, 0.0));
}

TEST_CASE("tril: the book's renormalising mask, attn_weights * tril(ones(6, 6))",
          "[tril][golden]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor weights = golden_tensor("causal.softmax");
  CHECK(bits_of(tril(weights).values(), DType::Float32) ==
        bits_of(attention_golden("causal.masked_simple").values, DType::Float32));
  // torch.tril(torch.ones(6, 6)) itself, the book's mask_simple.
  const std::vector<double> mask = tril(ones({6, 6})).values();
  for (size_t k = 0; k < mask.size(); ++k) CHECK(mask[k] == (k % 6 <= k / 6 ? 1.0 : 0.0));
}

TEST_CASE("tril: backward keeps dY on and below the diagonal", "[tril]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(zeros({2, 3}, DType::Float64));
  Tensor y = tril(x, 1);
  tape.backward(y, std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(x.grad_values() == std::vector<double>{1, 2, 0, 4, 5, 6});
}

TEST_CASE("tril: errors name the op and the tensor", "[tril][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({4});
  x.set_name("w");
  CHECK_THROWS_WITH(tril(x),
                    "tril: x \"w\" [4]: expected at least 2 dims (the last two form the "
                    "matrices)");
}

GRADCHECK_TEST_CASE("tril", "ranks 2-4, several diagonals") {
  uint64_t seed = 50;
  for (int64_t k : {-1, 0, 2}) {
    for (const Shape& shape : {Shape{4, 4}, Shape{3, 5}, Shape{2, 4, 3}, Shape{2, 2, 3, 3}}) {
      INFO(shape.str() << " diagonal " << k);
      auto report = gradcheck("tril", [k](std::span<const Tensor> in) { return tril(in[0], k); },
                              {random_input(shape, ++seed)});
      testing::require_gradcheck(report, "tril");
    }
  }
}
