// Test helper: reads the torch.optim replay goldens (tests/goldens/optim/runs/*.txt, written by
// make_optim_goldens.py in the suite's one format, through tests/goldens.h) and replays one
// through tapegrad's optimiser, schedule and clipping.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <tapegrad/optim/optim.h>
#include "tests/compare.h"  // worse, relative_error: NaN-aware maxima
#include "tests/goldens.h"

namespace tapegrad::testing {

struct GoldenParam {
  std::string name;
  size_t group = 0;
  Shape shape;
};

struct GoldenStep {
  std::vector<double> lrs;  // per group, the lr torch used in this step
  std::map<std::string, std::vector<double>> grads, after;
  bool has_norm = false;
  double norm = 0.0;
};

struct GoldenRun {
  std::string file;
  std::string optimizer;
  DType dtype = DType::Float32;
  std::map<std::string, double> options;
  std::vector<std::pair<double, double>> groups;  // lr, weight decay
  std::vector<GoldenParam> params;
  std::vector<std::string> schedule, clip;
  std::map<std::string, std::vector<double>> init;
  std::vector<GoldenStep> steps;
};

// Writes `g` into p's gradient, in p's dtype.
inline void set_grad(const Parameter& p, const std::vector<double>& g) {
  REQUIRE(static_cast<int64_t>(g.size()) == p.numel());
  for (size_t i = 0; i < g.size(); ++i) {
    if (p.dtype() == DType::Float32) {
      p.grad<float>()[i] = static_cast<float>(g[i]);
    } else {
      p.grad<double>()[i] = g[i];
    }
  }
}

// The run in tests/goldens/<relative> (the record layout is make_optim_goldens.py's).
inline GoldenRun read_golden_run(const std::string& relative) {
  std::vector<std::string> order;
  const std::map<std::string, GoldenTensor> records = read_goldens(relative, &order);
  const auto at = [&](const std::string& name) -> const GoldenTensor& {
    const auto it = records.find(name);
    if (it == records.end()) FAIL("golden file " << relative << " has no \"" << name << "\"");
    return it->second;
  };
  const auto after_prefix = [](const std::string& name, const std::string& prefix) {
    return name.starts_with(prefix) ? name.substr(prefix.size()) : std::string();
  };
  GoldenRun run;
  run.file = std::filesystem::path(relative).filename().string();
  run.optimizer = at("optimizer").text;
  run.schedule = words_of(at("schedule").text);
  run.clip = words_of(at("clip").text);
  for (const std::string& name : order) {  // file order: groups, parameters and steps in order
    const GoldenTensor& r = at(name);
    if (const std::string option = after_prefix(name, "option:"); !option.empty()) {
      run.options[option] = r.values.at(0);
    } else if (name.starts_with("group:")) {
      REQUIRE(std::stoul(name.substr(6)) == run.groups.size());
      run.groups.emplace_back(r.values.at(0), r.values.at(1));
    } else if (const std::string param = after_prefix(name, "param:"); !param.empty()) {
      const GoldenTensor& init = at("init:" + param);
      run.params.push_back({param, static_cast<size_t>(r.values.at(0)), init.shape});
      run.init[param] = init.values;
      run.dtype = init.dtype;
    } else if (name.starts_with("step:")) {
      // step:<kk>:lr opens step kk; its grad:, norm and after: records follow.
      const size_t k = std::stoul(name.substr(5, 2));
      const std::string what = name.substr(8);
      if (what == "lr") {
        REQUIRE(k == run.steps.size() + 1);
        run.steps.emplace_back();
        run.steps.back().lrs = r.values;
        continue;
      }
      REQUIRE(k == run.steps.size());
      GoldenStep& step = run.steps.back();
      if (what == "norm") {
        step.has_norm = true;
        step.norm = r.values.at(0);
      } else if (const std::string g = after_prefix(what, "grad:"); !g.empty()) {
        step.grads[g] = r.values;
      } else if (const std::string a = after_prefix(what, "after:"); !a.empty()) {
        step.after[a] = r.values;
      } else {
        FAIL("unknown record in " << relative << ": " << name);
      }
    } else if (name != "optimizer" && name != "schedule" && name != "clip" &&
               !name.starts_with("init:")) {
      FAIL("unknown record in " << relative << ": " << name);
    }
  }
  return run;
}

// Every run of one optimiser ("SGD", "Adam", "AdamW"), both dtypes, sorted by file name.
inline std::vector<GoldenRun> golden_runs(const std::string& optimizer) {
  const std::filesystem::path dir = std::string(TAPEGRAD_GOLDEN_DIR) + "/optim/runs";
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<GoldenRun> runs;
  for (const std::string& file : files) {
    GoldenRun run = read_golden_run("optim/runs/" + file);
    if (run.optimizer == optimizer) runs.push_back(std::move(run));
  }
  return runs;
}

inline std::unique_ptr<Optimizer> make_optimizer(const GoldenRun& run,
                                                 const std::vector<Parameter>& params) {
  std::vector<ParamGroup> groups(run.groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    groups[g].lr = run.groups[g].first;
    groups[g].weight_decay = run.groups[g].second;
  }
  for (size_t i = 0; i < params.size(); ++i)
    groups[run.params[i].group].params.push_back(params[i]);
  const auto& o = run.options;
  if (run.optimizer == "SGD") {
    return std::make_unique<SGD>(groups, SGDOptions{.lr = o.at("lr"),
                                                    .momentum = o.at("momentum"),
                                                    .dampening = o.at("dampening"),
                                                    .weight_decay = o.at("weight_decay"),
                                                    .nesterov = o.at("nesterov") != 0,
                                                    .maximize = o.at("maximize") != 0});
  }
  if (run.optimizer == "Adam") {
    return std::make_unique<Adam>(groups, AdamOptions{.lr = o.at("lr"),
                                                      .betas = {o.at("beta1"), o.at("beta2")},
                                                      .eps = o.at("eps"),
                                                      .weight_decay = o.at("weight_decay"),
                                                      .amsgrad = o.at("amsgrad") != 0,
                                                      .maximize = o.at("maximize") != 0});
  }
  REQUIRE(run.optimizer == "AdamW");
  return std::make_unique<AdamW>(groups, AdamWOptions{.lr = o.at("lr"),
                                                      .betas = {o.at("beta1"), o.at("beta2")},
                                                      .eps = o.at("eps"),
                                                      .weight_decay = o.at("weight_decay"),
                                                      .amsgrad = o.at("amsgrad") != 0,
                                                      .maximize = o.at("maximize") != 0});
}

inline std::unique_ptr<LRScheduler> make_schedule(const GoldenRun& run, Optimizer& opt) {
  const std::vector<std::string>& s = run.schedule;
  auto num = [&](size_t k) { return std::strtod(s.at(k).c_str(), nullptr); };
  auto whole = [&](size_t k) { return static_cast<int64_t>(std::stoll(s.at(k))); };
  if (s.at(0) == "none") return nullptr;
  if (s[0] == "step") return std::make_unique<StepLR>(opt, whole(1), num(2));
  if (s[0] == "cosine") return std::make_unique<CosineAnnealingLR>(opt, whole(1), num(2));
  REQUIRE(s[0] == "warmup_cosine");
  return std::make_unique<WarmupCosineLR>(opt, whole(1), whole(2), num(3), num(4));
}

// How closely a replay followed torch.
struct ReplayReport {
  size_t values = 0;         // parameter values compared (all steps)
  size_t bit_exact = 0;      // of which identical to torch's bits
  double max_rel_error = 0;  // max |ours - torch| / max(|torch|, 1e-3)
  double max_lr_rel_error = 0;
  double max_norm_rel_error = 0;
};

// Replays a golden run: sets each step's gradients from torch, clips and steps like the script,
// and compares the parameters after every step.
inline ReplayReport replay(const GoldenRun& run) {
  std::vector<Parameter> params;
  for (const GoldenParam& gp : run.params) {
    params.push_back(Parameter::from_values(gp.shape, run.init.at(gp.name), run.dtype, gp.name));
  }
  std::unique_ptr<Optimizer> opt = make_optimizer(run, params);
  std::unique_ptr<LRScheduler> schedule = make_schedule(run, *opt);
  ReplayReport report;
  for (const GoldenStep& step : run.steps) {
    for (size_t g = 0; g < step.lrs.size(); ++g) {
      report.max_lr_rel_error =
          worse(report.max_lr_rel_error, std::abs(opt->lr(g) - step.lrs[g]) / step.lrs[g]);
    }
    for (size_t i = 0; i < params.size(); ++i)
      set_grad(params[i], step.grads.at(run.params[i].name));
    if (run.clip.at(0) == "norm") {
      const double norm_type =
          run.clip.at(2) == "inf" ? INFINITY : std::strtod(run.clip.at(2).c_str(), nullptr);
      const double norm =
          clip_grad_norm_(*opt, std::strtod(run.clip.at(1).c_str(), nullptr), norm_type);
      REQUIRE(step.has_norm);
      report.max_norm_rel_error =
          worse(report.max_norm_rel_error, std::abs(norm - step.norm) / step.norm);
    } else if (run.clip.at(0) == "value") {
      clip_grad_value_(*opt, std::strtod(run.clip.at(1).c_str(), nullptr));
    }
    opt->step();
    if (schedule) schedule->step();
    for (size_t i = 0; i < params.size(); ++i) {
      const std::vector<double>& expected = step.after.at(run.params[i].name);
      const std::vector<double> actual = params[i].values();
      REQUIRE(actual.size() == expected.size());
      for (size_t k = 0; k < actual.size(); ++k) {
        ++report.values;
        report.bit_exact += actual[k] == expected[k];
        report.max_rel_error = worse(report.max_rel_error, relative_error(actual[k], expected[k]));
      }
    }
  }
  return report;
}

// Replays every run of `optimizer` and checks the tolerances: parameters within 1e-9
// (float64) / 1e-5 (float32) relative (to max(|torch|, 1e-3), so values crossing zero are
// judged by the scale of the update), lrs within 1e-12, clip norms within 1e-12 (float64) /
// 1e-6 (float32: torch sums squares in float32 in its own order, tapegrad in double).
// Beyond the tolerances, it checks that every run without 2-norm clipping is bit-identical to
// torch: same roundings in the same order (only the 2-norm's summation order is not torch's).
// Returns the number of runs, so a missing golden directory cannot pass vacuously.
inline size_t check_golden_runs(const std::string& optimizer) {
  size_t count = 0;
  for (const GoldenRun& run : golden_runs(optimizer)) {
    ++count;
    INFO("golden " << run.file);
    REQUIRE(run.steps.size() == 20);
    const ReplayReport r = replay(run);
    const bool f64 = run.dtype == DType::Float64;
    INFO("bit-exact " << r.bit_exact << " of " << r.values << ", max relative error "
                      << r.max_rel_error);
    CHECK(r.values == 20 * 57);
    CHECK(r.max_rel_error <= (f64 ? 1e-9 : 1e-5));
    CHECK(r.max_lr_rel_error <= 1e-12);
    CHECK(r.max_norm_rel_error <= (f64 ? 1e-12 : 1e-6));
    const bool two_norm_clip = run.clip.at(0) == "norm" && run.clip.at(2) != "inf";
    if (!two_norm_clip) {
      CHECK(r.bit_exact == r.values);
      CHECK(r.max_lr_rel_error == 0.0);
    }
  }
  return count;
}

}  // namespace tapegrad::testing
