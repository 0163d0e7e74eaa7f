// Tests for ops/losses.cpp: torch 1.13's goldens for every loss and option, the errors, the
// gradients at the kinks, and float64 gradient checks.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/losses.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

namespace test_losses {

using Inputs = std::vector<Tensor>;
using LossCall = std::function<Tensor(const Inputs&, const std::string& name)>;

const testing::GoldenFile& goldens() {
  return testing::golden_file("losses/losses.txt");
}

Tensor constant(const std::string& name) {
  const testing::GoldenTensor& g = goldens()[name];
  return from_values(g.shape, g.values, g.dtype);
}

Ids ids(const std::string& name) {
  const testing::GoldenTensor& g = goldens()[name];
  return Ids(g.shape, g.ints());
}

Reduction reduction_of(const std::string& word) {
  if (word == "none") return Reduction::None;
  if (word == "sum") return Reduction::Sum;
  if (word == "batchmean") return Reduction::BatchMean;
  return Reduction::Mean;
}

// Runs one golden case `<base>.<reduction>.<dtype>` (or `<base>.<dtype>`): the differentiable
// inputs by suffix, torch's loss and gradients within `ulps` of the dtype's epsilon. Returns how
// many values were bit-for-bit torch's.
int64_t check_case(const std::string& name, const std::vector<std::string>& grads,
                   const LossCall& call, double ulps) {
  INFO(name);
  Tape tape;
  TapeScope scope(tape);
  Inputs in;
  for (const std::string& s : grads) {
    const testing::GoldenTensor& g = goldens()[name + "." + s];
    in.push_back(from_values(g.shape, g.values, g.dtype, true));
  }
  const DType dtype = in[0].dtype();
  const Tensor out = call(in, name);
  CHECK(out.shape() == goldens()[name + ".out"].shape);
  int64_t equal = testing::require_near(out.values(), goldens()[name + ".out"], dtype, ulps, "out");
  tape.backward(out, goldens()[name + ".dy"].values);
  for (size_t k = 0; k < grads.size(); ++k) {
    equal += testing::require_near(in[k].grad_values(), goldens()[name + ".d" + grads[k]], dtype,
                                   ulps, "d" + grads[k]);
  }
  return equal;
}

// Every reduction and dtype of one case.
void check_cases(const std::string& base, const std::vector<std::string>& grads,
                 const std::function<Tensor(const Inputs&, const std::string&, Reduction)>& call,
                 double ulps, std::vector<std::string> reductions = {"none", "mean", "sum"}) {
  for (const std::string& r : reductions) {
    for (const char* tag : {"f32", "f64"}) {
      const std::string name = base + "." + r + "." + tag;
      check_case(
          name, grads,
          [&](const Inputs& in, const std::string& n) { return call(in, n, reduction_of(r)); },
          ulps);
    }
  }
}

}  // namespace test_losses

TEST_CASE("mse_loss, l1_loss, smooth_l1_loss, huber_loss: every reduction matches torch",
          "[losses][goldens]") {
  test_losses::check_cases(
      "mse", {"x", "t"},
      [](const test_losses::Inputs& in, const std::string&, Reduction r) {
        return mse_loss(in[0], in[1], r);
      },
      4);
  test_losses::check_cases(
      "l1", {"x", "t"},
      [](const test_losses::Inputs& in, const std::string&, Reduction r) {
        return l1_loss(in[0], in[1], r);
      },
      4);
  for (const char* beta : {"1.0", "0.5", "0.0"}) {
    test_losses::check_cases(
        std::string("smooth_l1_b") + beta, {"x", "t"},
        [&](const test_losses::Inputs& in, const std::string&, Reduction r) {
          return smooth_l1_loss(in[0], in[1], {.reduction = r, .beta = std::stod(beta)});
        },
        4);
  }
  for (const char* delta : {"1.0", "2.0"}) {
    test_losses::check_cases(
        std::string("huber_d") + delta, {"x", "t"},
        [&](const test_losses::Inputs& in, const std::string&, Reduction r) {
          return huber_loss(in[0], in[1], {.reduction = r, .delta = std::stod(delta)});
        },
        4);
  }
}

TEST_CASE("binary_cross_entropy and with_logits: weight, pos_weight, reductions match torch",
          "[losses][goldens]") {
  test_losses::check_cases(
      "bce", {"x", "t"},
      [](const test_losses::Inputs& in, const std::string&, Reduction r) {
        return binary_cross_entropy(in[0], in[1], {.reduction = r});
      },
      4);
  test_losses::check_cases(
      "bce_w", {"x", "t"},
      [](const test_losses::Inputs& in, const std::string& n, Reduction r) {
        return binary_cross_entropy(in[0], in[1],
                                    {.weight = test_losses::constant(n + ".w"), .reduction = r});
      },
      4);
  test_losses::check_cases(
      "bce_logits", {"x", "t"},
      [](const test_losses::Inputs& in, const std::string&, Reduction r) {
        return binary_cross_entropy_with_logits(in[0], in[1], {.reduction = r});
      },
      8);
  test_losses::check_cases(
      "bce_logits_w_pw", {"x", "t"},
      [](const test_losses::Inputs& in, const std::string& n, Reduction r) {
        return binary_cross_entropy_with_logits(in[0], in[1],
                                                {.weight = test_losses::constant(n + ".w"),
                                                 .pos_weight = test_losses::constant(n + ".pw"),
                                                 .reduction = r});
      },
      8);
}

TEST_CASE("nll_loss and cross_entropy: weights, ignore_index, label smoothing, (N, C, d1, d2)",
          "[losses][goldens]") {
  test_losses::check_cases(
      "nll", {"x"},
      [](const test_losses::Inputs& in, const std::string& n, Reduction r) {
        return nll_loss(in[0], test_losses::ids(n + ".ids"), {.reduction = r});
      },
      4);
  test_losses::check_cases(
      "nll_w", {"x"},
      [](const test_losses::Inputs& in, const std::string& n, Reduction r) {
        return nll_loss(in[0], test_losses::ids(n + ".ids"),
                        {.weight = test_losses::constant(n + ".w"), .reduction = r});
      },
      4);
  test_losses::check_cases(
      "nll4d", {"x"},
      [](const test_losses::Inputs& in, const std::string& n, Reduction r) {
        return nll_loss(in[0], test_losses::ids(n + ".ids"), {.reduction = r});
      },
      4);
  for (const char* ls : {"0.0", "0.2"}) {
    test_losses::check_cases(
        std::string("ce_ls") + ls, {"x"},
        [&](const test_losses::Inputs& in, const std::string& n, Reduction r) {
          return cross_entropy(
              in[0], test_losses::ids(n + ".ids"),
              CrossEntropyOptions{.reduction = r, .label_smoothing = std::stod(ls)});
        },
        8);
    test_losses::check_cases(
        std::string("ce_w_ls") + ls, {"x"},
        [&](const test_losses::Inputs& in, const std::string& n, Reduction r) {
          return cross_entropy(in[0], test_losses::ids(n + ".ids"),
                               CrossEntropyOptions{.weight = test_losses::constant(n + ".w"),
                                                   .reduction = r,
                                                   .label_smoothing = std::stod(ls)});
        },
        8);
  }
  test_losses::check_cases(
      "ce4d_w_ls0.1", {"x"},
      [](const test_losses::Inputs& in, const std::string& n, Reduction r) {
        return cross_entropy(
            in[0], test_losses::ids(n + ".ids"),
            CrossEntropyOptions{
                .weight = test_losses::constant(n + ".w"), .reduction = r, .label_smoothing = 0.1});
      },
      8);
  test_losses::check_cases(
      "ce_prob", {"x", "t"},
      [](const test_losses::Inputs& in, const std::string&, Reduction r) {
        return cross_entropy(in[0], in[1], {.reduction = r});
      },
      8);
  test_losses::check_cases(
      "ce_prob_w_ls0.3", {"x", "t"},
      [](const test_losses::Inputs& in, const std::string& n, Reduction r) {
        return cross_entropy(
            in[0], in[1],
            {.weight = test_losses::constant(n + ".w"), .reduction = r, .label_smoothing = 0.3});
      },
      8);
}

TEST_CASE("kl_div, cosine_similarity, cosine_embedding_loss, margin_ranking_loss match torch",
          "[losses][goldens]") {
  const std::vector<std::string> with_batchmean{"none", "mean", "sum", "batchmean"};
  test_losses::check_cases(
      "kl_div", {"x"},
      [](const test_losses::Inputs& in, const std::string& n, Reduction r) {
        return kl_div(in[0], test_losses::constant(n + ".t"), {.reduction = r});
      },
      8, with_batchmean);
  test_losses::check_cases(
      "kl_div_log", {"x", "t"},
      [](const test_losses::Inputs& in, const std::string&, Reduction r) {
        return kl_div(in[0], in[1], {.reduction = r, .log_target = true});
      },
      8, with_batchmean);
  for (const char* tag : {"f32", "f64"}) {
    test_losses::check_case(
        std::string("cosine_similarity.") + tag, {"x1", "x2"},
        [](const test_losses::Inputs& in, const std::string&) {
          return cosine_similarity(in[0], in[1], 1);
        },
        8);
  }
  test_losses::check_cases(
      "cosine_embedding_m0.2", {"x1", "x2"},
      [](const test_losses::Inputs& in, const std::string& n, Reduction r) {
        return cosine_embedding_loss(in[0], in[1], test_losses::constant(n + ".y"),
                                     {.margin = 0.2, .reduction = r});
      },
      8);
  test_losses::check_cases(
      "margin_ranking_m0.1", {"x1", "x2"},
      [](const test_losses::Inputs& in, const std::string& n, Reduction r) {
        return margin_ranking_loss(in[0], in[1], test_losses::constant(n + ".y"),
                                   {.margin = 0.1, .reduction = r});
      },
      4);
}

TEST_CASE("losses: the gradients at the kinks are torch's", "[losses]") {
  Tape tape;
  TapeScope scope(tape);
  // d = P − T = 0, ±β (β = 0.5), ±δ (δ = 2)
  const std::vector<double> p{1.0, 1.5, 0.5, 3.0, -1.0};
  const std::vector<double> t{1.0, 1.0, 1.0, 1.0, 1.0};
  const auto grad_of = [&](const std::function<Tensor(const Tensor&, const Tensor&)>& f) {
    tape.reset();
    Tensor x = from_values({5}, p, DType::Float64, true);
    f(x, from_values({5}, t, DType::Float64)).backward();
    return x.grad_values();
  };
  // l1: sgn(0) = 0
  CHECK(grad_of([](const Tensor& x, const Tensor& y) { return l1_loss(x, y, Reduction::Sum); }) ==
        std::vector<double>{0, 1, -1, 1, -1});
  // smooth_l1 at |d| = β: d/β = ±1
  CHECK(grad_of([](const Tensor& x, const Tensor& y) {
          return smooth_l1_loss(x, y, {.reduction = Reduction::Sum, .beta = 0.5});
        }) == std::vector<double>{0, 1, -1, 1, -1});
  // smooth_l1 with β = 0 is |d|, but d = 0 takes torch's d <= −β branch: −1
  CHECK(grad_of([](const Tensor& x, const Tensor& y) {
          return smooth_l1_loss(x, y, {.reduction = Reduction::Sum, .beta = 0.0});
        }) == std::vector<double>{-1, 1, -1, 1, -1});
  // huber at |d| = δ: d = ±δ
  CHECK(grad_of([](const Tensor& x, const Tensor& y) {
          return huber_loss(x, y, {.reduction = Reduction::Sum, .delta = 2.0});
        }) == std::vector<double>{0, 0.5, -0.5, 2, -2});
}

TEST_CASE("nll_loss and cross_entropy: ignored targets, all ignored, -inf elsewhere", "[losses]") {
  Tape tape;
  TapeScope scope(tape);
  const double inf = INFINITY;
  // A −inf log-probability off the targets (or under an ignored one) stays out of the result.
  Tensor x = from_values({2, 3}, std::vector<double>{-inf, -0.5, -1.0, -inf, -2.0, -0.1},
                         DType::Float64, true);
  const Ids target({2}, {1, -100});
  Tensor y = nll_loss(x, target, {.reduction = Reduction::None});
  CHECK(y.values() == std::vector<double>{0.5, 0.0});
  sum(y).backward();
  CHECK(x.grad_values() == std::vector<double>{0, -1, 0, 0, 0, 0});
  // Every target ignored: 0 / 0 = NaN for the mean, as torch; 0 for the sum.
  const Ids none({2}, {-100, -100});
  CHECK(std::isnan(nll_loss(x, none).item()));
  CHECK(nll_loss(x, none, {.reduction = Reduction::Sum}).item() == 0.0);
  // A mean of class-weighted targets divides by the sum of their weights.
  Tensor w = tensor({1.0, 3.0, 0.5}, DType::Float64);
  const Ids both({2}, {1, 2});
  CHECK(nll_loss(x, both, {.weight = w}).item() == (3.0 * 0.5 + 0.5 * 0.1) / 3.5);
  // An input [C] with a target [] is the row [1, C] with the target [1].
  Tensor row = tensor({0.3, -1.2, 2.0}, DType::Float64);
  const CrossEntropyOptions smooth{
      .weight = w, .reduction = Reduction::Sum, .label_smoothing = 0.3};
  CHECK(cross_entropy(row, Ids({}, {2}), smooth).item() ==
        cross_entropy(reshape(row, {1, 3}), Ids({1}, {2}), smooth).item());
  // The call forms of ops.h are the fused op, bit for bit.
  Tensor logits = tensor({{0.3, -1.2, 2.0}, {1.0, 0.0, -0.5}}, DType::Float64);
  CHECK(cross_entropy(logits, both, CrossEntropyOptions{}).item() ==
        cross_entropy(logits, both).item());
  CHECK(cross_entropy(logits, both, CrossEntropyOptions{}).item() ==
        Approx(nll_loss(log_softmax(logits, 1), both).item()).epsilon(1e-15));
}

TEST_CASE("losses: bad targets, weights, shapes and options are Errors naming the loss",
          "[losses][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 3, 2});
  CHECK_THROWS_WITH(nll_loss(x, Ids({2, 2}, {0, 1, 2, 3})),
                    "nll_loss: target[1, 1] = 3 is out of range [0, 3)");
  CHECK_THROWS_WITH(cross_entropy(x, Ids({2, 2}, {0, -1, 2, 0}), CrossEntropyOptions{}),
                    "cross_entropy: target[0, 1] = -1 is out of range [0, 3)");
  CHECK_THROWS_WITH(nll_loss(x, Ids({2, 3}, {0, 0, 0, 0, 0, 0})),
                    "nll_loss: input [2, 3, 2] and target [2, 3]: expected target [2, 2]");
  CHECK_THROWS_WITH(nll_loss(x, Ids({2, 2}, {0, 0, 0, 0}), {.weight = tensor({1.0, NAN, 1.0})}),
                    "nll_loss: weight [3]: weight[1] is NaN");
  CHECK_THROWS_WITH(nll_loss(x, Ids({2, 2}, {0, 0, 0, 0}), {.weight = tensor({1.0, 1.0})}),
                    Catch::Contains("nll_loss: weight [2]: expected one weight per class, [3]"));
  CHECK_THROWS_WITH(
      cross_entropy(x, zeros({2, 3})),
      Catch::Contains("cross_entropy: input [2, 3, 2] and probability target [2, 3]"));
  CHECK_THROWS_WITH(cross_entropy(x, zeros({2, 3, 2}), {.ignore_index = 0}),
                    Catch::Contains("ignore_index = 0 with probability targets"));
  CHECK_THROWS_WITH(
      cross_entropy(x, Ids({2, 2}, {0, 0, 0, 0}), CrossEntropyOptions{.label_smoothing = 1.5}),
      Catch::Contains("cross_entropy: label_smoothing = 1.5"));
  CHECK_THROWS_WITH(l1_loss(zeros({2}), zeros({3})),
                    "l1_loss: input [2] and target [3]: shapes must be equal or broadcast");
  CHECK_THROWS_WITH(l1_loss(zeros({2}), zeros({2}), Reduction::BatchMean),
                    "l1_loss: reduction batchmean is kl_div's only (expected none, mean or sum)");
  CHECK_THROWS_WITH(smooth_l1_loss(zeros({2}), zeros({2}), {.beta = -1.0}),
                    Catch::Contains("smooth_l1_loss: beta = -1"));
  CHECK_THROWS_WITH(huber_loss(zeros({2}), zeros({2}), {.delta = 0.0}),
                    Catch::Contains("huber_loss: delta = 0"));
  CHECK_THROWS_WITH(binary_cross_entropy(tensor({{0.5, 1.5}}), tensor({{0.5, 0.5}})),
                    "binary_cross_entropy: input [1, 2]: input[0, 1] = 1.500000 is outside [0, 1]");
  CHECK_THROWS_WITH(binary_cross_entropy(tensor({0.5}), tensor({NAN})),
                    Catch::Contains("target[0] = nan is outside [0, 1]"));
  CHECK_THROWS_WITH(
      binary_cross_entropy_with_logits(zeros({2, 3}), zeros({2, 3}), {.pos_weight = zeros({2})}),
      Catch::Contains("pos_weight [2] does not broadcast to input [2, 3]"));
  CHECK_THROWS_WITH(cosine_embedding_loss(zeros({2, 3}), zeros({2, 3}), zeros({3})),
                    Catch::Contains("cosine_embedding_loss: target [3] and input1 [2, 3]"));
  CHECK_THROWS_WITH(margin_ranking_loss(zeros({2}), zeros({2}), zeros({1, 2})),
                    Catch::Contains("margin_ranking_loss"));
  CHECK_THROWS_WITH(cosine_similarity(zeros({2, 3}), zeros({3})),
                    Catch::Contains("cosine_similarity: x1 [2, 3] and x2 [3]"));
}

GRADCHECK_TEST_CASE("binary_cross_entropy", "input and target, weighted, every reduction") {
  for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    auto report = gradcheck(
        "binary_cross_entropy",
        [r](std::span<const Tensor> in) {
          return binary_cross_entropy(
              in[0], in[1], {.weight = tensor({0.5, 2.0, 1.0}, DType::Float64), .reduction = r});
        },
        {random_input({2, 3}, 31, 0.1, 0.9), random_input({2, 3}, 32, 0.0, 1.0)});
    testing::require_gradcheck(report, "binary_cross_entropy");
  }
}

TEST_CASE("losses: float64 gradient checks of every loss", "[losses][gradcheck]") {
  using S = std::span<const Tensor>;
  struct Check {
    const char* name;
    GradcheckFunction f;
    std::vector<GradcheckInput> inputs;
  };
  const Ids t2({4}, {2, 0, -100, 1});
  const Ids t4({2, 2, 2}, {0, 2, 1, -100, 2, 2, 0, 1});
  const auto w = [] { return tensor({0.5, 2.0, 1.5}, DType::Float64); };
  const std::vector<Check> checks{
      {"l1_loss",
       [](S in) { return l1_loss(in[0], in[1], Reduction::Sum); },
       {random_input({2, 3}, 1), random_input({2, 3}, 2)}},
      {"smooth_l1_loss",
       [](S in) {
         return smooth_l1_loss(in[0], in[1], {.reduction = Reduction::None, .beta = 0.7});
       },
       {random_input({2, 3}, 3), random_input({2, 3}, 4)}},
      {"huber_loss",
       [](S in) { return huber_loss(in[0], in[1], {.delta = 0.6}); },
       {random_input({2, 3}, 5), random_input({2, 3}, 6)}},
      {"mse_loss",
       [](S in) { return mse_loss(in[0], in[1], Reduction::None); },
       {random_input({2, 3}, 7), random_input({2, 3}, 8)}},
      {"bce_with_logits",
       [&](S in) {
         return binary_cross_entropy_with_logits(
             in[0], in[1], {.weight = w(), .pos_weight = tensor({3.0, 1.0, 0.5}, DType::Float64)});
       },
       {random_input({2, 3}, 9, -4.0, 4.0), random_input({2, 3}, 10, 0.0, 1.0)}},
      {"nll_loss",
       [&](S in) { return nll_loss(in[0], t2, {.weight = w(), .reduction = Reduction::Mean}); },
       {random_input({4, 3}, 11)}},
      {"cross_entropy",
       [&](S in) {
         return cross_entropy(in[0], t4,
                              CrossEntropyOptions{.weight = w(), .label_smoothing = 0.2});
       },
       {random_input({2, 3, 2, 2}, 12)}},
      {"cross_entropy probabilities",
       [&](S in) { return cross_entropy(in[0], in[1], {.weight = w(), .label_smoothing = 0.1}); },
       {random_input({4, 3}, 13), random_input({4, 3}, 14, 0.0, 1.0)}},
      {"kl_div",
       [](S in) { return kl_div(in[0], in[1], {.reduction = Reduction::BatchMean}); },
       {random_input({3, 4}, 15), random_input({3, 4}, 16, 0.1, 1.0)}},
      {"kl_div log_target",
       [](S in) { return kl_div(in[0], in[1], {.reduction = Reduction::Sum, .log_target = true}); },
       {random_input({3, 4}, 17), random_input({3, 4}, 18)}},
      {"cosine_similarity",
       [](S in) { return cosine_similarity(in[0], in[1], 1); },
       {random_input({3, 4}, 19), random_input({3, 4}, 20)}},
      {"cosine_embedding_loss",
       [](S in) {
         return cosine_embedding_loss(in[0], in[1], tensor({1.0, -1.0, -1.0}, DType::Float64),
                                      {.margin = -0.5});
       },
       {random_input({3, 4}, 21), random_input({3, 4}, 22)}},
      {"margin_ranking_loss",
       [](S in) {
         return margin_ranking_loss(in[0], in[1], tensor({1.0, -1.0, 1.0, -1.0}, DType::Float64),
                                    {.margin = 0.1, .reduction = Reduction::Sum});
       },
       {random_input({4}, 23), random_input({4}, 24)}},
  };
  for (const Check& c : checks) {
    INFO(c.name);
    const GradcheckReport report = gradcheck(c.name, c.f, c.inputs);
    INFO(report.message);
    CHECK(report.passed);
  }
}

TEST_CASE("losses: second derivatives through the composites (gradgradcheck)", "[losses][grad]") {
  using S = std::span<const Tensor>;
  const Ids target({2, 2}, {0, 2, -100, 1});
  const GradcheckReport ce = gradgradcheck(
      "cross_entropy",
      [&](S in) {
        return cross_entropy(in[0], target,
                             CrossEntropyOptions{.weight = tensor({0.5, 2.0, 1.5}, DType::Float64),
                                                 .label_smoothing = 0.2});
      },
      {random_input({2, 3, 2}, 41)});
  INFO(ce.message);
  CHECK(ce.passed);
  const GradcheckReport bce =
      gradgradcheck("binary_cross_entropy_with_logits",
                    [](S in) {
                      return binary_cross_entropy_with_logits(
                          in[0], in[1], {.pos_weight = tensor({2.0, 0.5, 1.0}, DType::Float64)});
                    },
                    {random_input({2, 3}, 42, -3.0, 3.0), random_input({2, 3}, 43, 0.0, 1.0)});
  INFO(bce.message);
  CHECK(bce.passed);
  const GradcheckReport cos =
      gradgradcheck("cosine_embedding_loss",
                    [](S in) {
                      return cosine_embedding_loss(
                          in[0], in[1], tensor({1.0, -1.0}, DType::Float64), {.margin = -0.9});
                    },
                    {random_input({2, 3}, 44), random_input({2, 3}, 45)});
  INFO(cos.message);
  CHECK(cos.passed);
}
