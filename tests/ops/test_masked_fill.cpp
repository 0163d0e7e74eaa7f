// Tests for ops/masked_fill.cpp.
#include <cmath>
#include <limits>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/compare.h"
#include "tests/ops/attention_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;
using testing::attention_golden;
using testing::bits_of;
using testing::golden_tensor;

namespace {
using tapegrad::testing::kInf;
}

TEST_CASE("masked_fill: small exact case", "[masked_fill]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  Tensor mask = tensor({{1.0, 0.0, 0.0}, {0.0, 0.0, 1.0}});
  Tensor y = masked_fill(x, mask, 9.0);
  CHECK(y.shape() == Shape{2, 3});
  CHECK(y.dtype() == DType::Float32);
  CHECK(y.values() == std::vector<double>{9, 2, 3, 4, 5, 9});
  // Any nonzero (negative, NaN) means "fill".
  Tensor odd = tensor({-2.0, std::nan(""), 0.0}, DType::Float64);
  CHECK(masked_fill(tensor({1.0, 2.0, 3.0}), odd, 0.0).values() == std::vector<double>{0, 0, 3});
}

TEST_CASE("masked_fill: -inf fill forward, and the backward skips filled elements",
          "[masked_fill]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({{1.0, 2.0}, {3.0, 4.0}}));
  Tensor y = masked_fill(x, tensor({{0.0, 1.0}, {0.0, 0.0}}), -kInf);
  CHECK(y.values() == std::vector<double>{1, -kInf, 3, 4});
  tape.backward(y, std::vector<double>{10, 20, 30, 40});
  CHECK(x.grad_values() == std::vector<double>{10, 0, 30, 40});
}

TEST_CASE("masked_fill: a [T, T] mask broadcasts over [B, H, T, T], mask dtype may differ",
          "[masked_fill]") {
  Tape tape;
  TapeScope scope(tape);
  std::vector<double> xs(2 * 3 * 4 * 4);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<double>(i);
  Tensor x = requires_grad(from_values({2, 3, 4, 4}, xs, DType::Float32));
  Tensor mask = triu(ones({4, 4}, DType::Float64), 1);  // float64 mask on float32 x
  Tensor y = masked_fill(x, mask, -kInf);
  const std::vector<double> v = y.values();
  std::vector<double> ones_grad(xs.size(), 1.0);
  tape.backward(y, ones_grad);
  const std::vector<double> g = x.grad_values();
  for (size_t k = 0; k < xs.size(); ++k) {
    const size_t i = (k / 4) % 4, j = k % 4;
    CHECK(v[k] == (j > i ? -kInf : xs[k]));
    CHECK(g[k] == (j > i ? 0.0 : 1.0));
  }
  // A row mask [T] and a [1, T] column mask broadcast too.
  Tensor row = masked_fill(zeros({2, 3}), tensor({0.0, 1.0, 0.0}), 7.0);
  CHECK(row.values() == std::vector<double>{0, 7, 0, 0, 7, 0});
  Tensor col = masked_fill(zeros({2, 3}), from_values({2, 1}, std::vector<double>{1, 0}), 7.0);
  CHECK(col.values() == std::vector<double>{7, 7, 7, 0, 0, 0});
}

TEST_CASE("masked_fill: the book's triu mask with -inf gives torch's masked scores exactly",
          "[masked_fill][golden]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor scaled = golden_tensor("causal.scaled_scores");
  Tensor y = masked_fill(scaled, triu(ones({6, 6}), 1), -kInf);
  CHECK(bits_of(y.values(), DType::Float32) ==
        bits_of(attention_golden("causal.masked_scaled").values, DType::Float32));
}

TEST_CASE("masked_fill: a mask that requires grad gets none", "[masked_fill]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({1.0, 2.0}));
  Tensor mask = requires_grad(tensor({1.0, 0.0}));
  Tensor y = masked_fill(x, mask, 0.0);
  tape.backward(y, std::vector<double>{1.0, 1.0});
  CHECK(x.grad_values() == std::vector<double>{0.0, 1.0});
  CHECK(mask.grad_values().empty());
  // Only the mask requires grad: the backward runs and gives nothing.
  Tape tape2;
  TapeScope scope2(tape2);
  Tensor m2 = requires_grad(tensor({1.0, 0.0}));
  Tensor y2 = masked_fill(tensor({1.0, 2.0}), m2, 0.0);
  tape2.backward(y2, std::vector<double>{1.0, 1.0});
  CHECK(m2.grad_values().empty());
}

TEST_CASE("masked_fill: shape and value errors name the op and both tensors",
          "[masked_fill][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 3});
  x.set_name("scores");
  CHECK_THROWS_WITH(masked_fill(x, zeros({4}), 0.0),
                    "masked_fill: x \"scores\" [2, 3], mask [4]: the mask must broadcast to x's "
                    "shape");
  CHECK_THROWS_WITH(masked_fill(x, zeros({2, 2, 3}), 0.0),
                    "masked_fill: x \"scores\" [2, 3], mask [2, 2, 3]: the mask must broadcast to "
                    "x's shape (it would enlarge x to [2, 2, 3])");
  CHECK_THROWS_WITH(masked_fill(x, zeros({2, 1}), 1e300),
                    Catch::Contains("masked_fill: x \"scores\" [2, 3]: value") &&
                        Catch::Contains("overflows float32"));
  CHECK(tape.size() == 4);  // the four leaves; no op was recorded
  CHECK_NOTHROW(masked_fill(x, zeros({2, 1}), -kInf));
}

GRADCHECK_TEST_CASE("masked_fill", "broadcast masks up to [B, H, T, T], finite fill") {
  struct Case {
    Shape x, mask;
  };
  const Case cases[] = {{{5}, {5}},          {{3, 4}, {3, 4}},       {{3, 4}, {4}},
                        {{2, 3, 4}, {3, 1}}, {{2, 2, 4, 4}, {4, 4}}, {{2, 3, 4, 4}, {2, 1, 4, 4}}};
  uint64_t seed = 20;
  for (const Case& c : cases) {
    INFO(c.x.str() << " mask " << c.mask.str());
    GradcheckInput mask = random_input(c.mask, ++seed, 0.0, 1.0);
    for (double& v : mask.values) v = v < 0.5 ? 0.0 : 1.0;
    mask.requires_grad = false;
    auto report = gradcheck(
        "masked_fill", [](std::span<const Tensor> in) { return masked_fill(in[0], in[1], 0.25); },
        {random_input(c.x, ++seed), mask});
    testing::require_gradcheck(report, "masked_fill");
  }
}
