// Tests for ops/triu.cpp.
#include <cstdint>
#include <limits>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/attention_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;
using testing::attention_golden;
using testing::golden_tensor;

TEST_CASE("triu: small exact case (the book's causal mask)", "[triu]") {
  Tape tape;
  TapeScope scope(tape);
  // torch.triu(torch.ones(3, 3), diagonal=1)
  CHECK(triu(ones({3, 3}), 1).values() == std::vector<double>{0, 1, 1, 0, 0, 1, 0, 0, 0});
  CHECK(triu(tensor({{1.0, 2.0}, {3.0, 4.0}})).values() == std::vector<double>{1, 2, 0, 4});
}

TEST_CASE("triu: torch's values on a batched non-square block for several diagonals",
          "[triu][golden]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = golden_tensor("tri.x");  // [2, 3, 5], float64
  for (int64_t k : {-1, 0, 2}) {
    INFO("diagonal " << k);
    CHECK(triu(x, k).values() == attention_golden("triu.k" + std::to_string(k)).values);
  }
  CHECK(triu(x, std::numeric_limits<int64_t>::min()).values() == x.values());
  CHECK(triu(x, -2).values() == x.values());
  CHECK(triu(x, std::numeric_limits<int64_t>::max()).values() == std::vector<double>(30, 0.0));
  CHECK(triu(x, 5).values() == std::vector<double>(30, 0.0));
}

TEST_CASE("triu: backward keeps dY on and above the diagonal", "[triu]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(zeros({1, 3, 2}));
  Tensor y = triu(x);
  tape.backward(y, std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(x.grad_values() == std::vector<double>{1, 2, 0, 4, 0, 0});
}

TEST_CASE("triu: errors name the op and the tensor", "[triu][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(triu(scalar(1.0)),
                    "triu: x []: expected at least 2 dims (the last two form the matrices)");
}

GRADCHECK_TEST_CASE("triu", "ranks 2-4, several diagonals") {
  uint64_t seed = 60;
  for (int64_t k : {-2, 0, 1}) {
    for (const Shape& shape : {Shape{4, 4}, Shape{3, 5}, Shape{2, 4, 3}, Shape{2, 2, 3, 3}}) {
      INFO(shape.str() << " diagonal " << k);
      auto report = gradcheck("triu", [k](std::span<const Tensor> in) { return triu(in[0], k); },
                              {random_input(shape, ++seed)});
      testing::require_gradcheck(report, "triu");
    }
  }
}
