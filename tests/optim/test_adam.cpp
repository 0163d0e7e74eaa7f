// Tests for optim/adam.cpp: torch.optim.Adam/AdamW replays, hand-checked steps, and errors.
#include <tapegrad/optim/adam.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include <tapegrad/graph/error.h>
#include "tests/optim/optim_golden.h"
#include "tests/optim/threaded_steps.h"

using namespace tapegrad;
using Catch::Contains;

using tapegrad::testing::set_grad;

TEST_CASE("Adam: matches torch.optim.Adam step for step on the attention model", "[optim][adam]") {
  // defaults, betas + eps + weight decay, amsgrad, maximize, cosine schedule + clip by inf-norm:
  // 5 option sets x float32/float64, 20 steps each.
  CHECK(testing::check_golden_runs("Adam") == 10);
}

TEST_CASE("AdamW: matches torch.optim.AdamW step for step on the attention model",
          "[optim][adamw]") {
  // defaults, amsgrad + weight decay, groups without decay on biases and layer-norm weights,
  // warm-up + cosine + clip by 2-norm: 4 option sets x float32/float64, 20 steps each.
  CHECK(testing::check_golden_runs("AdamW") == 8);
}

TEST_CASE("Adam: the first step moves each weight by lr·g/(|g| + eps)", "[optim][adam]") {
  // After one step m̂ = g and v̂ = g², so the bias-corrected update is lr·g/(|g| + eps).
  Parameter w = Parameter::from_values({3}, {1.0, -2.0, 0.5}, DType::Float64, "w");
  Adam optimizer({w}, AdamOptions{.lr = 0.1});
  const std::vector<double> g{0.3, -4.0, 1e-3};
  set_grad(w, g);
  optimizer.step();
  const std::vector<double> start{1.0, -2.0, 0.5};
  for (size_t i = 0; i < g.size(); ++i) {
    CHECK(w.values()[i] == Approx(start[i] - 0.1 * g[i] / (std::abs(g[i]) + 1e-8)).epsilon(1e-14));
  }
}

TEST_CASE("AdamW: weight decay is decoupled, Adam's is an L2 term in the gradient",
          "[optim][adam][adamw]") {
  // With a zero gradient AdamW only shrinks w by (1 - lr·wd); Adam sees g = wd·w and takes a
  // full-size normalized step lr·sign(w).
  Parameter a = Parameter::from_values({1}, {2.0}, DType::Float64, "a");
  Parameter b = Parameter::from_values({1}, {2.0}, DType::Float64, "b");
  AdamW adamw({a}, AdamWOptions{.lr = 0.1, .weight_decay = 0.5});
  Adam adam({b}, AdamOptions{.lr = 0.1, .weight_decay = 0.5});
  a.grad<double>();  // a zero gradient (torch: a.grad = torch.zeros_like(a))
  b.grad<double>();
  adamw.step();
  adam.step();
  CHECK(a.values()[0] == 2.0 * (1.0 - 0.1 * 0.5));
  CHECK(b.values()[0] == Approx(2.0 - 0.1).epsilon(1e-7));
  CHECK(AdamW({a}).options().weight_decay == 0.01);  // torch's AdamW default
  CHECK(Adam({b}).options().weight_decay == 0.0);
}

TEST_CASE("Adam: amsgrad divides by the largest second moment seen so far", "[optim][adam]") {
  Parameter plain = Parameter::from_values({1}, {0.0}, DType::Float64, "plain");
  Parameter ams = Parameter::from_values({1}, {0.0}, DType::Float64, "ams");
  Adam a({plain}, AdamOptions{.lr = 0.1});
  Adam b({ams}, AdamOptions{.lr = 0.1, .amsgrad = true});
  for (double g : {10.0, 0.1, 0.1}) {  // a large gradient, then small ones
    set_grad(plain, {g});
    set_grad(ams, {g});
    a.step();
    b.step();
  }
  // Both took the same first step; afterwards amsgrad's larger denominator moved it less.
  CHECK(std::abs(ams.values()[0]) < std::abs(plain.values()[0]));
  const OptimizerState state = b.state();
  REQUIRE(state.find_tensor("param.0.max_exp_avg_sq") != nullptr);
  CHECK(state.find_tensor("param.0.max_exp_avg_sq")->values[0] >=
        state.find_tensor("param.0.exp_avg_sq")->values[0]);
}

TEST_CASE("Adam: invalid options throw at construction, naming the optimiser", "[optim][adam]") {
  Parameter w({3, 4}, DType::Float32, "W_key");
  CHECK_THROWS_WITH(Adam({w}, AdamOptions{.lr = -1e-3}), "Adam: lr must be >= 0, got -0.001");
  CHECK_THROWS_WITH(Adam({w}, AdamOptions{.betas = {1.0, 0.999}}),
                    "Adam: betas[0] must be in [0, 1), got 1");
  CHECK_THROWS_WITH(AdamW({w}, AdamWOptions{.betas = {0.9, -0.1}}),
                    "AdamW: betas[1] must be in [0, 1), got -0.1");
  CHECK_THROWS_WITH(Adam({w}, AdamOptions{.eps = 0.0}), "Adam: eps must be > 0, got 0");
  CHECK_THROWS_WITH(AdamW({w}, AdamWOptions{.eps = -1e-8}), "AdamW: eps must be > 0, got -1e-08");
  CHECK_THROWS_WITH(AdamW({w}, AdamWOptions{.weight_decay = -0.1}),
                    "AdamW: weight_decay must be >= 0, got -0.1");
  Parameter b({4}, DType::Float32, "b");
  CHECK_THROWS_WITH(AdamW(std::vector<ParamGroup>{{.params = {w, b}}, {.params = {b}}}),
                    "AdamW: parameter \"b\" [4] is given twice (in group 0 and in group 1)");
  CHECK_THROWS_WITH(
      AdamW(std::vector<ParamGroup>{{.params = {w}}, {.params = {b}, .weight_decay = -1.0}}),
      "AdamW: group 1: weight_decay must be >= 0, got -1");
}

TEST_CASE("AdamW: two threads give the same bits as one, the split cutting parameters",
          "[optim][adamw][threads]") {
  // Large enough (≈ 430k elements) that set_num_threads(2) splits step() in two, and the cut
  // falls inside the first parameter; amsgrad and a second group exercise every buffer.
  const std::vector<int64_t> sizes{300001, 7, 123457};
  const auto make = [&] {
    std::vector<Parameter> ps;
    for (size_t k = 0; k < sizes.size(); ++k) {
      std::vector<double> v(static_cast<size_t>(sizes[k]));
      for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.001 * static_cast<double>(i) + k);
      ps.push_back(Parameter::from_values({sizes[k]}, v, DType::Float32, "p"));
    }
    return ps;
  };
  const auto run = [&](int threads) {
    std::vector<Parameter> ps = make();
    std::vector<ParamGroup> groups(2);
    groups[0].params = {ps[0], ps[1]};
    groups[1].params = {ps[2]};
    groups[1].weight_decay = 0.0;
    AdamW optimizer(groups, AdamWOptions{.lr = 1e-2, .amsgrad = true});
    return testing::weights_after_three_steps(optimizer, ps, threads);
  };
  const std::vector<float> one = run(1), two = run(2);
  REQUIRE(one.size() == two.size());
  CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
  CHECK(one[5] != std::sin(0.005f));  // the step moved the weights
}

TEST_CASE("Adam/AdamW: the 16-lane loop rounds each element as the one-element loop does",
          "[optim][adam][adamw]") {
  // A 37-element parameter runs two registers of 16 and a tail of 5 (where AVX-512 is built);
  // the same 37 values as 37 one-element parameters run the scalar loop only. Every option that
  // changes the arithmetic (coupled/decoupled decay, amsgrad, maximize), float32, three steps
  // with gradients that include zeros and a negative zero.
  constexpr int64_t n = 37;
  const auto value = [](int64_t i, int step) {
    return std::sin(0.37 * static_cast<double>(i) + step) * (i % 7 == 0 ? 0.0 : 1.0);
  };
  const auto gradient = [](int64_t i, int step) {
    if (i % 11 == 3) return -0.0;
    return 0.01 * std::cos(1.3 * static_cast<double>(i) - step) * (i % 5 == 0 ? 0.0 : 1.0);
  };
  for (const bool decoupled : {false, true}) {
    for (const bool amsgrad : {false, true}) {
      for (const bool maximize : {false, true}) {
        INFO("decoupled " << decoupled << " amsgrad " << amsgrad << " maximize " << maximize);
        std::vector<double> start(n);
        for (int64_t i = 0; i < n; ++i) start[static_cast<size_t>(i)] = value(i, 0);
        const Parameter whole = Parameter::from_values({n}, start, DType::Float32, "whole");
        std::vector<Parameter> single;
        for (int64_t i = 0; i < n; ++i) {
          single.push_back(Parameter::from_values({1}, {value(i, 0)}, DType::Float32, "one"));
        }
        std::vector<Parameter> all = single;
        all.push_back(whole);
        const auto optimizer = [&]() -> std::unique_ptr<Optimizer> {
          if (decoupled) {
            return std::make_unique<AdamW>(
                all,
                AdamWOptions{
                    .lr = 1e-2, .weight_decay = 0.1, .amsgrad = amsgrad, .maximize = maximize});
          }
          return std::make_unique<Adam>(
              all, AdamOptions{
                       .lr = 1e-2, .weight_decay = 0.1, .amsgrad = amsgrad, .maximize = maximize});
        }();
        for (int step = 1; step <= 3; ++step) {
          for (int64_t i = 0; i < n; ++i) {
            const float g = static_cast<float>(gradient(i, step));
            whole.grad<float>()[i] = g;
            single[static_cast<size_t>(i)].grad<float>()[0] = g;
          }
          optimizer->step();
        }
        for (int64_t i = 0; i < n; ++i) {
          INFO("element " << i);
          const float a = whole.data<float>()[i],
                      b = single[static_cast<size_t>(i)].data<float>()[0];
          CHECK(std::memcmp(&a, &b, sizeof a) == 0);
        }
        CHECK(whole.data<float>()[1] != static_cast<float>(value(1, 0)));  // the steps moved it
      }
    }
  }
}
