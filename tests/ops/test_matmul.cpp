// Tests for ops/matmul.cpp.
#include "graph/factory.h"
#include "ops/ops.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("matmul: small exact case", "[matmul]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = matmul(tensor({{1.0, 2.0}, {3.0, 4.0}}), tensor({{5.0, 6.0}, {7.0, 8.0}}));
  CHECK(y.shape() == Shape{2, 2});
  CHECK(y.values() == std::vector<double>{19, 22, 43, 50});
}

TEST_CASE("matmul: inner-dim mismatch names both operands", "[matmul][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = zeros({3, 2});
  a.set_name("W_query");
  Tensor b = zeros({4, 5});
  CHECK_THROWS_WITH(matmul(a, b), "matmul: a \"W_query\" [3, 2] x b [4, 5]: inner dims 2 != 4");
}

GRADCHECK_TEST_CASE("matmul", "2-D shapes") {
  for (auto [m, k, n] : {std::tuple{1, 1, 1}, {2, 3, 4}, {5, 2, 3}}) {
    auto report = gradcheck(
        "matmul", [](std::span<const Tensor> in) { return matmul(in[0], in[1]); },
        {random_input({m, k}, 1), random_input({k, n}, 2)});
    testing::require_gradcheck(report, "matmul");
  }
}
