// Tests for ops/cross_entropy.cpp.
#include <cmath>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/fused_compare.h"
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

TEST_CASE("cross_entropy: small exact cases", "[cross_entropy]") {
  Tape tape;
  TapeScope scope(tape);
  const std::vector<int64_t> one{1}, two{2, 0};
  // Equal logits: −log(1/C).
  CHECK(cross_entropy(tensor({{0.0, 0.0}}, DType::Float64), one).item() == std::log(2.0));
  CHECK(cross_entropy(tensor({3.0, 3.0, 3.0, 3.0}, DType::Float64), one).item() ==
        Approx(std::log(4.0)).epsilon(1e-15));
  // Row 0, target 2: log(1 + e + 1) − 0; row 1, target 0: (2 + log 3) − 2.
  Tensor logits = tensor({{0.0, 1.0, 0.0}, {2.0, 2.0, 2.0}}, DType::Float64);
  const double row0 = std::log(2.0 + std::exp(1.0));
  const double row1 = std::log(3.0);
  CHECK(cross_entropy(logits, two).item() == Approx((row0 + row1) / 2).epsilon(1e-15));
}

TEST_CASE("cross_entropy: backward is (softmax − onehot) / N · dY", "[cross_entropy]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor logits = from_values({2, 2}, std::vector<double>{0, 0, 5, 5}, DType::Float64, true);
  const std::vector<int64_t> targets{1, 0};
  Tensor y = cross_entropy(logits, targets);
  tape.backward(y, std::vector<double>{4.0});
  // softmax is ½ everywhere (up to the rounding of exp(−log 2)); (½ − onehot) / 2 · 4
  const std::vector<double> expected{1, -1, -1, 1};
  const std::vector<double> grad = logits.grad_values();
  for (size_t i = 0; i < expected.size(); ++i) CHECK(grad[i] == Approx(expected[i]).margin(1e-15));
}

TEST_CASE("cross_entropy: large logits stay finite (stable log-sum-exp)", "[cross_entropy]") {
  Tape tape;
  TapeScope scope(tape);
  const std::vector<int64_t> target{1};
  Tensor y = cross_entropy(tensor({1000.0, 0.0}, DType::Float32), target);
  CHECK(y.item() == 1000.0f);
  Tensor y64 = cross_entropy(tensor({{1000.0, 1000.0}}, DType::Float64), target);
  CHECK(y64.item() == Approx(std::log(2.0)).margin(1e-12));  // (1000 + log 2) − 1000
}

TEST_CASE("cross_entropy: forward and gradient match PyTorch", "[cross_entropy][golden]") {
  const testing::GoldenFile golden("reductions", "cross_entropy.txt");
  for (const std::string name : {"batch", "single", "large"}) {
    INFO("case " << name);
    Tape tape;
    TapeScope scope(tape);
    const auto& l = golden[name + ".logits"];
    Tensor logits = from_values(l.shape, l.values, DType::Float64, true);
    const std::vector<int64_t> targets = golden[name + ".targets"].ints();
    Tensor loss = cross_entropy(logits, targets);
    testing::require_close(loss.values(), golden[name + ".loss"], 1e-12, "loss");
    tape.backward(loss, golden[name + ".dy"].values);
    testing::require_close(logits.grad_values(), golden[name + ".dlogits"], 1e-12, "dlogits");
  }
}

TEST_CASE("cross_entropy: float32 is within float32 rounding of PyTorch's float64 values",
          "[cross_entropy][golden]") {
  const testing::GoldenFile golden("reductions", "cross_entropy.txt");
  for (const std::string name : {"batch", "single"}) {
    INFO("case " << name);
    Tape tape;
    TapeScope scope(tape);
    const auto& l = golden[name + ".logits"];
    Tensor logits = from_values(l.shape, l.values, DType::Float32, true);
    Tensor loss = cross_entropy(logits, golden[name + ".targets"].ints());
    CHECK(loss.dtype() == DType::Float32);
    testing::require_close(loss.values(), golden[name + ".loss"], 1e-5, "loss");
    tape.backward(loss, golden[name + ".dy"].values);
    testing::require_close(logits.grad_values(), golden[name + ".dlogits"], 1e-6, "dlogits");
  }
}

TEST_CASE("cross_entropy: bad targets and shapes are errors", "[cross_entropy][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor logits = zeros({3, 4});
  logits.set_name("scores");
  const std::vector<int64_t> bad{0, 4, 1}, negative{0, 1, -1}, short_list{0, 1};
  CHECK_THROWS_WITH(
      cross_entropy(logits, bad),
      "cross_entropy: logits \"scores\" [3, 4]: targets[1] = 4 is out of range [0, 4)");
  CHECK_THROWS_WITH(
      cross_entropy(logits, negative),
      "cross_entropy: logits \"scores\" [3, 4]: targets[2] = -1 is out of range [0, 4)");
  CHECK_THROWS_WITH(cross_entropy(logits, short_list),
                    "cross_entropy: logits \"scores\" [3, 4]: 2 targets for 3 rows");
  CHECK_THROWS_WITH(cross_entropy(zeros({4}), short_list),
                    "cross_entropy: logits [4]: 2 targets for 1 row");
  CHECK_THROWS_WITH(cross_entropy(zeros({2, 3, 4}), short_list),
                    "cross_entropy: logits [2, 3, 4]: expected logits of shape [N, C] or [C]");
  CHECK(tape.size() == 3);  // nothing recorded by the failed calls
}

TEST_CASE("cross_entropy: ignore_index as torch, the book's chapter-7 example",
          "[cross_entropy][goldens]") {
  const testing::GoldenFile goldens("finetune", "finetune_goldens.txt");
  Tape tape;
  TapeScope scope(tape);
  Tensor logits_1 = tensor({{-1.0, 1.0}, {-0.5, 1.5}});
  Tensor logits_2 = requires_grad(tensor({{-1.0, 1.0}, {-0.5, 1.5}, {-0.5, 1.5}}));
  const std::vector<int64_t> targets_1{0, 1}, targets_2{0, 1, 1}, targets_3{0, 1, -100};
  const Tensor loss_1 = cross_entropy(logits_1, targets_1);
  const Tensor loss_2 = cross_entropy(logits_2, targets_2);
  Tensor loss_3 = cross_entropy(logits_2, targets_3);
  testing::require_near(loss_1.values(), goldens["ce_loss_1"], DType::Float32, 2, "loss_1");
  testing::require_near(loss_2.values(), goldens["ce_loss_2"], DType::Float32, 2, "loss_2");
  testing::require_near(loss_3.values(), goldens["ce_loss_3"], DType::Float32, 2, "loss_3");
  CHECK(std::abs(loss_1.item() - 1.1269) < 5e-5);  // the book's printed values
  CHECK(std::abs(loss_2.item() - 0.7936) < 5e-5);
  CHECK(loss_3.item() == loss_1.item());
  tape.backward(loss_3);
  testing::require_near(logits_2.grad_values(), goldens["ce_grad_3"], DType::Float32, 4,
                        "d loss_3 / d logits_2 (the ignored row gets zeros)");
  // Every target ignored: 0 / 0, NaN as in torch; a custom ignore_index; -1 stays out of range.
  CHECK(std::isnan(cross_entropy(logits_1, std::vector<int64_t>{-100, -100}).item()));
  CHECK(std::isnan(goldens["ce_loss_all_ignored"].values[0]));
  CHECK(cross_entropy(logits_2, std::vector<int64_t>{0, 1, 7}, 7).item() == loss_1.item());
  CHECK_THROWS_WITH(cross_entropy(logits_1, std::vector<int64_t>{0, -1}),
                    Catch::Contains("targets[1] = -1 is out of range [0, 2)"));
}

GRADCHECK_TEST_CASE("cross_entropy", "w.r.t. logits, [N, C] and [C]") {
  struct Case {
    Shape shape;
    std::vector<int64_t> targets;
  };
  for (const Case& c :
       {Case{{5}, {3}}, Case{{1, 3}, {0}}, Case{{4, 3}, {2, 0, 2, 1}}, Case{{3, 6}, {5, 0, 3}},
        Case{{4, 3}, {2, -100, 0, -100}}}) {  // ignore_index rows: no term, no gradient
    INFO("logits " << c.shape.str());
    auto report =
        gradcheck("cross_entropy",
                  [&](std::span<const Tensor> in) { return cross_entropy(in[0], c.targets); },
                  {random_input(c.shape, 31, -3.0, 3.0)});
    testing::require_gradcheck(report, "cross_entropy");
  }
}

TEST_CASE("cross_entropy: the same bits with 1 and 2 threads, forward and backward",
          "[cross_entropy][threads]") {
  // 65 rows over a 10k vocabulary: enough work for cross_entropy to split its rows.
  const int64_t rows = 65, cols = 10000;
  const auto x = random_input({rows, cols}, 51, -4.0, 4.0);
  std::vector<int64_t> targets;
  for (int64_t i = 0; i < rows; ++i) targets.push_back(i * 149 % cols);
  auto run = [&] {
    return testing::run_forward_backward(
        [&](std::span<const Tensor> in) { return cross_entropy(in[0], targets); }, {x},
        DType::Float32, {0.75});
  };
  const auto [one, two] = testing::at_1_and_2_threads(run);
  CHECK(one.value == two.value);
  CHECK(one.grads == two.grads);
}
