// Tests for optim/schedule.cpp: lr sequences against torch.optim.lr_scheduler, resuming, errors.
#include <tapegrad/optim/schedule.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <numbers>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/optim/optim.h>
#include "tests/compare.h"
#include "tests/goldens.h"

// The book's formula below is written op by op like the Python it mirrors; keep GCC from fusing
// a*b + c into one rounding.
#pragma GCC optimize("fp-contract=off")

using namespace tapegrad;
using Catch::Contains;

namespace {

struct GoldenSchedule {
  std::string name;
  std::vector<std::string> spec;  // kind, then its arguments
  double base[2] = {0, 0};
  std::vector<std::array<double, 2>> lrs;  // epoch 0, 1, ...
};

// Every schedule of tests/goldens/optim/schedules.txt, in the file's order.
std::vector<GoldenSchedule> read_schedules() {
  const testing::GoldenFile& g = testing::golden_file("optim/schedules.txt");
  std::vector<GoldenSchedule> out;
  for (const std::string& name : g.names()) {
    if (!name.starts_with("schedule:")) continue;
    GoldenSchedule s;
    s.name = name.substr(9);
    s.spec = testing::words_of(g[name].text);
    const std::vector<double>& base = g["base:" + s.name].values;
    REQUIRE(base.size() == 2);
    s.base[0] = base[0];
    s.base[1] = base[1];
    const testing::GoldenTensor& lrs = g["lrs:" + s.name];
    REQUIRE(lrs.shape.size(1) == 2);
    for (size_t k = 0; k + 1 < lrs.values.size(); k += 2) {
      s.lrs.push_back({lrs.values[k], lrs.values[k + 1]});
    }
    out.push_back(std::move(s));
  }
  return out;
}

// Appendix D of the book: linear warm-up from initial_lr to peak_lr, then cosine to min_lr; as a
// factor of the peak lr (the same arithmetic as make_optim_goldens.py's book_lambda).
double book_factor(int64_t step) {
  const double initial_lr = 1e-4, peak_lr = 0.01, min_lr = 0.1 * initial_lr;
  const int64_t warmup = 20, total = 100;
  double lr = 0.0;
  if (step < warmup) {
    lr = initial_lr + static_cast<double>(step) * (peak_lr - initial_lr) / warmup;
  } else {
    const double progress =
        static_cast<double>(step - warmup) / static_cast<double>(total - warmup);
    lr = min_lr + (peak_lr - min_lr) * 0.5 * (1 + std::cos(std::numbers::pi * progress));
  }
  return lr / peak_lr;
}

std::unique_ptr<LRScheduler> make(const std::vector<std::string>& spec, Optimizer& opt) {
  auto num = [&](size_t k) { return std::strtod(spec.at(k).c_str(), nullptr); };
  auto whole = [&](size_t k) { return static_cast<int64_t>(std::stoll(spec.at(k))); };
  const std::string& kind = spec.at(0);
  if (kind == "step") return std::make_unique<StepLR>(opt, whole(1), num(2));
  if (kind == "cosine") return std::make_unique<CosineAnnealingLR>(opt, whole(1), num(2));
  if (kind == "linear") return std::make_unique<LinearLR>(opt, num(1), num(2), whole(3));
  if (kind == "warmup_cosine") {
    return std::make_unique<WarmupCosineLR>(opt, whole(1), whole(2), num(3), num(4));
  }
  REQUIRE(kind == "book");
  return std::make_unique<LambdaLR>(opt, book_factor);
}

}  // namespace

TEST_CASE("schedule: lr sequences equal torch's lr_scheduler for 60 steps", "[optim][schedule]") {
  const std::vector<GoldenSchedule> goldens = read_schedules();
  // StepLR x2, CosineAnnealingLR x2, LinearLR x2, SequentialLR(LinearLR, CosineAnnealingLR) x2
  // (one with the book's numbers), LambdaLR with the book's formula.
  REQUIRE(goldens.size() == 9);
  for (const GoldenSchedule& golden : goldens) {
    INFO("schedule " << golden.name);
    Parameter a({1}, DType::Float32, "a");
    Parameter b({1}, DType::Float32, "b");
    SGD optimizer({ParamGroup{.params = {a}, .lr = golden.base[0]},
                   ParamGroup{.params = {b}, .lr = golden.base[1]}},
                  SGDOptions{});
    std::unique_ptr<LRScheduler> schedule = make(golden.spec, optimizer);
    size_t exact = 0;
    double max_rel = 0.0;
    for (size_t epoch = 0; epoch < golden.lrs.size(); ++epoch) {
      if (epoch > 0) {
        optimizer.step();
        schedule->step();
      }
      for (size_t g = 0; g < 2; ++g) {
        const double expected = golden.lrs[epoch][g];
        const double actual = optimizer.lr(g);
        exact += actual == expected;
        max_rel = testing::worse(max_rel, std::abs(actual - expected) / std::max(expected, 1e-300));
        // lr_at replays the recursion from the start: the same value.
        CHECK(schedule->lr_at(static_cast<int64_t>(epoch), golden.base[g]) == actual);
      }
    }
    CHECK(max_rel <= 1e-12);                // the bar
    CHECK(exact == 2 * golden.lrs.size());  // and in fact bit-identical
    CHECK(schedule->last_step() == 60);
  }
}

TEST_CASE("schedule: load_state resumes the sequence bit-identically", "[optim][schedule]") {
  Parameter w({2}, DType::Float64, "w");
  SGD straight_opt({w}, SGDOptions{.lr = 0.3, .momentum = 0.9});
  WarmupCosineLR straight(straight_opt, 5, 40, 0.2, 1e-3);
  for (int s = 0; s < 17; ++s) straight.step();
  const SchedulerState saved = straight.state();
  CHECK(saved.step == 17);
  CHECK(saved.base_lrs == std::vector<double>{0.3});

  SGD resumed_opt({w}, SGDOptions{.lr = 0.3, .momentum = 0.9});
  WarmupCosineLR resumed(resumed_opt, 5, 40, 0.2, 1e-3);
  resumed.load_state(saved);
  CHECK(resumed_opt.lr(0) == straight_opt.lr(0));
  for (int s = 17; s < 40; ++s) {
    straight.step();
    resumed.step();
    CHECK(resumed_opt.lr(0) == straight_opt.lr(0));
  }
  CHECK_THROWS_WITH(
      resumed.load_state(SchedulerState{3, {0.1, 0.2}}),
      "LRScheduler::load_state: the state has 2 base lrs but the optimizer has 1 group");
}

TEST_CASE("schedule: works with any optimiser and keeps the first schedule's base lr",
          "[optim][schedule]") {
  Parameter w = Parameter::from_values({1}, {0.0}, DType::Float64, "w");
  Adam adam({w}, AdamOptions{.lr = 0.1});
  StepLR halve(adam, /*step_size=*/1, /*gamma=*/0.5);
  CHECK(adam.lr(0) == 0.1);
  w.grad<double>()[0] = 1.0;
  adam.step();  // Adam's first step is lr·sign(g) (up to eps)
  CHECK(w.values()[0] == Approx(-0.1).epsilon(1e-7));
  halve.step();
  CHECK(adam.lr(0) == 0.05);
  CHECK(adam.initial_lr(0) == 0.1);
  // A later schedule starts from the recorded initial lr, not the current one (torch).
  CosineAnnealingLR cosine(adam, 10);
  CHECK(cosine.base_lrs() == std::vector<double>{0.1});
}

TEST_CASE("schedule: invalid arguments throw, naming the schedule", "[optim][schedule]") {
  Parameter w({1}, DType::Float32, "w");
  SGD opt({w}, 0.1);
  CHECK_THROWS_WITH(StepLR(opt, 0), "StepLR: step_size must be >= 1, got 0");
  CHECK_THROWS_WITH(StepLR(opt, 3, -0.5), "StepLR: gamma must be >= 0, got -0.5");
  CHECK_THROWS_WITH(LinearLR(opt, 0.0), "LinearLR: start_factor must be in (0, 1], got 0");
  CHECK_THROWS_WITH(LinearLR(opt, 0.5, 1.5), "LinearLR: end_factor must be in [0, 1], got 1.5");
  CHECK_THROWS_WITH(LinearLR(opt, 0.5, 1.0, 0), "LinearLR: total_iters must be >= 1, got 0");
  CHECK_THROWS_WITH(CosineAnnealingLR(opt, 0), "CosineAnnealingLR: T_max must be >= 1, got 0");
  CHECK_THROWS_WITH(CosineAnnealingLR(opt, 5, -1e-3),
                    "CosineAnnealingLR: eta_min must be >= 0, got -0.001");
  CHECK_THROWS_WITH(WarmupCosineLR(opt, 10, 10, 0.1),
                    "WarmupCosineLR: total_steps (10) must be greater than warmup_steps (10)");
  CHECK_THROWS_WITH(WarmupCosineLR(opt, -1, 10, 0.1),
                    "WarmupCosineLR: warmup_steps must be >= 0, got -1");
  CHECK_THROWS_WITH(WarmupCosineLR(opt, 2, 10, 0.0),
                    "WarmupCosineLR: start_factor must be in (0, 1], got 0");
  CHECK(opt.lr(0) == 0.1);  // none of them touched the optimiser
  CHECK_FALSE(opt.initial_lr(0).has_value());

  // A function that goes negative is refused at the step that would set it.
  LambdaLR bad(opt, [](int64_t step) { return 1.0 - 0.5 * static_cast<double>(step); });
  bad.step();
  bad.step();
  CHECK(opt.lr(0) == 0.0);
  CHECK_THROWS_WITH(bad.step(), Contains("LRScheduler: step 3 gives group 0 the lr -0.05"));
  CHECK(opt.lr(0) == 0.0);
  CHECK(bad.last_step() == 2);
}

TEST_CASE("schedule: warm-up with no warm-up steps is plain cosine annealing",
          "[optim][schedule]") {
  Parameter w({1}, DType::Float32, "w");
  SGD a({w}, 0.1);
  SGD b({w}, 0.1);
  WarmupCosineLR warm(a, 0, 12, 0.5, 1e-3);
  CosineAnnealingLR cosine(b, 12, 1e-3);
  for (int s = 0; s < 30; ++s) {
    CHECK(a.lr(0) == b.lr(0));
    warm.step();
    cosine.step();
  }
}
