// Tests for optim/optimizer.cpp: parameter groups, zero_grad, and saving/restoring state.
#include <tapegrad/optim/optimizer.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/optim/optim.h>

using namespace tapegrad;
using Catch::Contains;

namespace {

// Deterministic, step-dependent gradients standing in for backward().
void fake_backward(const std::vector<Parameter>& params, int step) {
  for (size_t i = 0; i < params.size(); ++i) {
    const Parameter& p = params[i];
    for (int64_t k = 0; k < p.numel(); ++k) {
      const double g = std::sin(0.7 * step + 1.3 * static_cast<double>(i) + 0.1 * k) + 0.05 * k;
      if (p.dtype() == DType::Float32) {
        p.grad<float>()[k] = static_cast<float>(g);
      } else {
        p.grad<double>()[k] = g;
      }
    }
  }
}

std::vector<Parameter> make_params(DType dtype, const std::vector<std::vector<double>>& values) {
  const Shape shapes[] = {{3, 4}, {4}, {3}};
  const char* names[] = {"W_query", "out_proj.bias", "norm.weight"};
  std::vector<Parameter> params;
  for (size_t i = 0; i < 3; ++i) {
    std::vector<double> v = values.empty() ? std::vector<double>{} : values[i];
    if (v.empty()) {
      for (int64_t k = 0; k < shapes[i].numel(); ++k) v.push_back(0.1 * k - 0.3 * i);
    }
    params.push_back(Parameter::from_values(shapes[i], v, dtype, names[i]));
  }
  return params;
}

// An optimiser (with or without a schedule) over three parameters; "decay"/"no decay" groups.
struct Training {
  std::vector<Parameter> params;
  std::unique_ptr<Optimizer> optimizer;
  std::unique_ptr<LRScheduler> schedule;

  void run(int from, int steps) {
    for (int s = from; s < from + steps; ++s) {
      optimizer->zero_grad();
      fake_backward(params, s);
      optimizer->step();
      if (schedule) schedule->step();
    }
  }
  std::vector<std::vector<double>> values() const {
    std::vector<std::vector<double>> out;
    for (const Parameter& p : params) out.push_back(p.values());
    return out;
  }
};

using Factory = std::function<Training(std::vector<Parameter>)>;

Training sgd_nesterov(std::vector<Parameter> params) {
  Training t{params, nullptr, nullptr};
  t.optimizer = std::make_unique<SGD>(
      params, SGDOptions{.lr = 0.05, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true});
  return t;
}

Training adam_amsgrad(std::vector<Parameter> params) {
  Training t{params, nullptr, nullptr};
  t.optimizer = std::make_unique<Adam>(params, AdamOptions{.lr = 0.01, .amsgrad = true});
  return t;
}

Training adamw_groups_schedule(std::vector<Parameter> params) {
  Training t{params, nullptr, nullptr};
  t.optimizer = std::make_unique<AdamW>(
      std::vector<ParamGroup>{{.params = {params[0]}},
                              {.params = {params[1], params[2]}, .lr = 0.02, .weight_decay = 0.0}},
      AdamWOptions{.lr = 0.01, .weight_decay = 0.1});
  t.schedule = std::make_unique<WarmupCosineLR>(*t.optimizer, 3, 15, 0.1, 1e-4);
  return t;
}

void check_states_equal(const OptimizerState& a, const OptimizerState& b) {
  CHECK(a.optimizer == b.optimizer);
  CHECK(a.step == b.step);
  REQUIRE(a.scalars.size() == b.scalars.size());
  for (size_t i = 0; i < a.scalars.size(); ++i) {
    CHECK(a.scalars[i].name == b.scalars[i].name);
    CHECK(a.scalars[i].value == b.scalars[i].value);
  }
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    CHECK(a.tensors[i].name == b.tensors[i].name);
    CHECK(a.tensors[i].shape == b.tensors[i].shape);
    CHECK(a.tensors[i].dtype == b.tensors[i].dtype);
    CHECK(a.tensors[i].values == b.tensors[i].values);
  }
}

}  // namespace

TEST_CASE("optimizer: groups take their own lr and weight decay, others the options'",
          "[optim][optimizer]") {
  Parameter w({3, 4}, DType::Float32, "W");
  Parameter b({4}, DType::Float32, "b");
  Parameter ln({4}, DType::Float32, "ln");
  SGD optimizer({ParamGroup{.params = {w}}, ParamGroup{.params = {b, ln}, .weight_decay = 0.0},
                 ParamGroup{.params = {}, .lr = 0.5}},
                SGDOptions{.lr = 0.1, .weight_decay = 0.01});
  REQUIRE(optimizer.num_groups() == 3);
  CHECK(optimizer.lr(0) == 0.1);
  CHECK(optimizer.weight_decay(0) == 0.01);
  CHECK(optimizer.lr(1) == 0.1);
  CHECK(optimizer.weight_decay(1) == 0.0);
  CHECK(optimizer.lr(2) == 0.5);
  CHECK(optimizer.params(1) == std::vector<Parameter>{b, ln});
  CHECK(optimizer.parameters() == std::vector<Parameter>{w, b, ln});
  optimizer.set_lr(1, 0.25);
  CHECK(optimizer.lr(1) == 0.25);
  CHECK_THROWS_WITH(optimizer.set_lr(1, -1.0), "SGD: group 1: lr must be >= 0, got -1");
  CHECK_THROWS_WITH(optimizer.lr(3), "SGD: no group 3 (this optimizer has 3 groups)");
  CHECK_THROWS_WITH(SGD({ParamGroup{.params = {w}}, ParamGroup{.params = {b}, .lr = -0.1}},
                        SGDOptions{.lr = 0.1}),
                    "SGD: group 1: lr must be >= 0, got -0.1");
}

TEST_CASE("optimizer: a group's weight decay applies to its parameters only",
          "[optim][optimizer]") {
  // Zero gradients: only weight decay moves a weight, so the no-decay group stays put.
  Parameter w = Parameter::from_values({2}, {1.0, -1.0}, DType::Float64, "w");
  Parameter b = Parameter::from_values({2}, {1.0, -1.0}, DType::Float64, "b");
  SGD optimizer({ParamGroup{.params = {w}}, ParamGroup{.params = {b}, .weight_decay = 0.0}},
                SGDOptions{.lr = 0.5, .weight_decay = 0.1});
  w.grad<double>();  // zero gradients (torch: p.grad = torch.zeros_like(p))
  b.grad<double>();
  optimizer.step();
  CHECK(w.values() == std::vector<double>{0.95, -0.95});
  CHECK(b.values() == std::vector<double>{1.0, -1.0});
}

TEST_CASE("optimizer: a parameter without a gradient is skipped and gets no state, as in torch",
          "[optim][optimizer]") {
  // torch: `if p.grad is None: continue` (no update, no weight decay, no state entry).
  Parameter w = Parameter::from_values({2}, {1.0, -1.0}, DType::Float32, "w");
  Parameter frozen_by_graph = Parameter::from_values({2}, {1.0, -1.0}, DType::Float32, "b");
  AdamW optimizer({w, frozen_by_graph}, AdamWOptions{.lr = 0.5, .weight_decay = 0.1});
  w.grad<float>()[0] = 1.0f;
  optimizer.step();
  optimizer.zero_grad();  // keeps frozen_by_graph without a gradient
  optimizer.step();
  CHECK_FALSE(frozen_by_graph.has_grad());
  CHECK(frozen_by_graph.values() == std::vector<double>{1.0, -1.0});
  CHECK(w.values() != std::vector<double>{1.0, -1.0});
  const OptimizerState state = optimizer.state();
  CHECK(state.find_tensor("param.0.exp_avg") != nullptr);
  CHECK(state.find_tensor("param.1.exp_avg") == nullptr);
  REQUIRE(state.find_scalar("param.0.step") != nullptr);
  CHECK(state.find_scalar("param.0.step")->value == 2.0);
}

TEST_CASE("optimizer: zero_grad zeroes every group's gradients", "[optim][optimizer]") {
  std::vector<Parameter> params = make_params(DType::Float32, {});
  Adam optimizer({ParamGroup{.params = {params[0]}}, ParamGroup{.params = {params[1], params[2]}}});
  fake_backward(params, 1);
  optimizer.zero_grad();
  for (const Parameter& p : params) {
    CHECK(p.grad_values() == std::vector<double>(static_cast<size_t>(p.numel()), 0.0));
  }
}

TEST_CASE("optimizer: state is allocated on the first step only", "[optim][optimizer]") {
  std::vector<Parameter> params = make_params(DType::Float32, {});
  Adam optimizer(params, AdamOptions{.amsgrad = true});
  CHECK(optimizer.state_allocations() == 0);
  CHECK(optimizer.state().tensors.empty());
  fake_backward(params, 0);
  optimizer.step();
  CHECK(optimizer.state_allocations() == 3 * 3);  // three slots for three parameters
  for (int s = 1; s < 6; ++s) {
    fake_backward(params, s);
    optimizer.step();
  }
  optimizer.load_state(optimizer.state());  // restoring reuses the buffers too
  optimizer.step();
  CHECK(optimizer.state_allocations() == 3 * 3);
}

TEST_CASE("optimizer: state() names every tensor and scalar as documented", "[optim][optimizer]") {
  std::vector<Parameter> params = make_params(DType::Float64, {});
  SGD sgd(params, SGDOptions{.lr = 0.1, .momentum = 0.9});
  fake_backward(params, 0);
  sgd.step();
  OptimizerState s = sgd.state();
  CHECK(s.optimizer == "SGD");
  CHECK(s.step == 1);
  REQUIRE(s.tensors.size() == 3);
  CHECK(s.tensors[1].name == "param.1.momentum_buffer");
  CHECK(s.tensors[1].shape == Shape{4});
  CHECK(s.tensors[1].dtype == DType::Float64);
  CHECK(s.tensors[1].values == params[1].grad_values());  // b1 = g1
  REQUIRE(s.find_scalar("group.0.lr") != nullptr);
  CHECK(s.find_scalar("group.0.lr")->value == 0.1);
  CHECK(s.find_scalar("group.0.weight_decay")->value == 0.0);

  Adam adam(params, AdamOptions{.lr = 0.1});
  CosineAnnealingLR schedule(adam, 10);
  adam.step();
  adam.step();
  s = adam.state();
  CHECK(s.find_scalar("param.2.step")->value == 2.0);
  CHECK(s.find_scalar("group.0.initial_lr")->value == 0.1);
  CHECK(s.find_tensor("param.0.exp_avg")->shape == Shape{3, 4});
  CHECK(s.find_tensor("param.2.exp_avg_sq") != nullptr);
  CHECK(s.find_tensor("param.2.max_exp_avg_sq") == nullptr);  // amsgrad is off
}

TEST_CASE("optimizer: continuing after save/restore is bit-identical to not stopping",
          "[optim][optimizer]") {
  const auto [name, factory, dtype] =
      GENERATE(std::make_tuple(std::string("SGD nesterov"), Factory(sgd_nesterov), DType::Float32),
               std::make_tuple(std::string("Adam amsgrad"), Factory(adam_amsgrad), DType::Float64),
               std::make_tuple(std::string("AdamW groups + warm-up/cosine"),
                               Factory(adamw_groups_schedule), DType::Float32));
  INFO(name);
  // The run that does not stop.
  Training straight = factory(make_params(dtype, {}));
  straight.run(0, 7);
  const OptimizerState saved = straight.optimizer->state();
  const SchedulerState saved_schedule =
      straight.schedule ? straight.schedule->state() : SchedulerState{};
  const std::vector<std::vector<double>> saved_values = straight.values();
  straight.run(7, 8);

  // A fresh process: new parameters holding the saved values, a new optimiser, the state.
  Training resumed = factory(make_params(dtype, saved_values));
  resumed.optimizer->load_state(saved);
  if (resumed.schedule) resumed.schedule->load_state(saved_schedule);
  resumed.run(7, 8);
  CHECK(resumed.values() == straight.values());
  check_states_equal(resumed.optimizer->state(), straight.optimizer->state());

  // Without the state the continuation differs, so the comparison above means something.
  Training forgetful = factory(make_params(dtype, saved_values));
  forgetful.run(7, 8);
  CHECK(forgetful.values() != straight.values());
}

TEST_CASE("optimizer: loading an empty state restarts the moments", "[optim][optimizer]") {
  Parameter w = Parameter::from_values({1}, {0.0}, DType::Float64, "w");
  SGD optimizer({w}, SGDOptions{.lr = 1.0, .momentum = 0.9});
  const OptimizerState fresh = optimizer.state();
  for (int s = 0; s < 3; ++s) {
    w.grad<double>()[0] = 1.0;
    optimizer.step();
  }
  optimizer.load_state(fresh);
  CHECK(optimizer.step_count() == 0);
  const double before = w.values()[0];
  w.grad<double>()[0] = 2.0;
  optimizer.step();  // the buffer starts again as the gradient
  CHECK(w.values()[0] == before - 2.0);
}

TEST_CASE("optimizer: load_state rejects a state that does not fit, changing nothing",
          "[optim][optimizer]") {
  std::vector<Parameter> params = make_params(DType::Float32, {});
  Adam optimizer(params, AdamOptions{.lr = 0.01});
  fake_backward(params, 0);
  optimizer.step();
  const OptimizerState good = optimizer.state();
  const std::vector<double> w_before = params[0].values();

  auto expect_rejected = [&](const OptimizerState& bad, const std::string& message) {
    CHECK_THROWS_WITH(optimizer.load_state(bad), Contains(message));
    check_states_equal(optimizer.state(), good);
    CHECK(params[0].values() == w_before);
  };
  auto tensor = [](OptimizerState& s, const std::string& name) -> StateTensor& {
    for (StateTensor& t : s.tensors) {
      if (t.name == name) return t;
    }
    FAIL("no " << name);
    return s.tensors[0];
  };

  OptimizerState bad = good;
  bad.optimizer = "SGD";
  expect_rejected(bad, "Adam: load_state: the state is from SGD, not Adam");

  bad = good;
  tensor(bad, "param.0.exp_avg").shape = Shape{4, 3};
  expect_rejected(bad,
                  "Adam: load_state: \"param.0.exp_avg\" is [4, 3] float32, but parameter "
                  "\"W_query\" [3, 4] is float32");

  bad = good;
  tensor(bad, "param.1.exp_avg_sq").dtype = DType::Float64;
  expect_rejected(bad,
                  "\"param.1.exp_avg_sq\" is [4] float64, but parameter \"out_proj.bias\" "
                  "[4] is float32");

  bad = good;
  tensor(bad, "param.2.exp_avg").values.pop_back();
  expect_rejected(bad, "\"param.2.exp_avg\" [3] holds 2 values, expected 3");

  bad = good;
  std::erase_if(bad.tensors, [](const StateTensor& t) { return t.name == "param.1.exp_avg_sq"; });
  expect_rejected(
      bad, "parameter \"out_proj.bias\" [4] has only part of its state (missing exp_avg_sq)");

  bad = good;
  bad.tensors.push_back(bad.tensors[0]);
  expect_rejected(bad, "\"param.0.exp_avg\" appears twice");

  bad = good;
  tensor(bad, "param.0.exp_avg").name = "param.0.momentum_buffer";
  expect_rejected(bad,
                  "unknown entry \"param.0.momentum_buffer\" (Adam here keeps exp_avg, "
                  "exp_avg_sq)");

  bad = good;
  tensor(bad, "param.0.exp_avg").name = "param.7.exp_avg";
  expect_rejected(bad, "\"param.7.exp_avg\": this optimizer has 3 parameters");

  bad = good;
  bad.scalars.push_back({"group.1.lr", 0.1});
  expect_rejected(bad, "\"group.1.lr\": this optimizer has 1 group");

  bad = good;
  std::erase_if(bad.scalars, [](const StateScalar& s) { return s.name == "group.0.lr"; });
  expect_rejected(bad, "missing \"group.0.lr\" (this optimizer has 1 group)");

  bad = good;
  bad.scalars[0].value = -0.5;  // group.0.lr
  expect_rejected(bad, "\"group.0.lr\" must be >= 0, got -0.5");

  bad = good;
  std::erase_if(bad.scalars, [](const StateScalar& s) { return s.name == "param.0.step"; });
  expect_rejected(bad, "parameter \"W_query\" [3, 4] has only part of its state (missing step)");

  // The good state still loads after all that.
  CHECK_NOTHROW(optimizer.load_state(good));
}
