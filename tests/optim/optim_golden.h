// Test helper: reads the torch.optim replay goldens (tests/goldens/optim/runs/*.txt, written by
// make_optim_goldens.py) and replays one through tapegrad's optimiser, schedule and clipping.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "optim/optim.h"
#include "tests/compare.h"  // worse, relative_error: NaN-aware maxima

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

inline std::vector<double> parse_values(std::istringstream& fields) {
  std::vector<double> out;
  // strtod reads float.hex output ("0x1.b85p-2") exactly.
  for (std::string token; fields >> token;) out.push_back(std::strtod(token.c_str(), nullptr));
  return out;
}

inline GoldenRun read_golden_run(const std::string& path) {
  std::ifstream in(path);
  if (!in) FAIL("cannot open " << path);
  GoldenRun run;
  run.file = std::filesystem::path(path).filename().string();
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string key;
    fields >> key;
    if (key == "optimizer") {
      fields >> run.optimizer;
    } else if (key == "dtype") {
      std::string d;
      fields >> d;
      run.dtype = d == "float64" ? DType::Float64 : DType::Float32;
    } else if (key == "option") {
      std::string name, value;
      fields >> name >> value;
      run.options[name] = std::strtod(value.c_str(), nullptr);
    } else if (key == "group") {
      size_t index = 0;
      std::string lr, wd;
      fields >> index >> lr >> wd;
      REQUIRE(index == run.groups.size());
      run.groups.emplace_back(std::strtod(lr.c_str(), nullptr), std::strtod(wd.c_str(), nullptr));
    } else if (key == "param") {
      GoldenParam p;
      fields >> p.name >> p.group;
      std::vector<int64_t> dims;
      for (int64_t d; fields >> d;) dims.push_back(d);
      p.shape = Shape(std::span<const int64_t>(dims));
      run.params.push_back(p);
    } else if (key == "schedule" || key == "clip") {
      std::vector<std::string>& out = key == "schedule" ? run.schedule : run.clip;
      for (std::string token; fields >> token;) out.push_back(token);
    } else if (key == "init") {
      std::string name;
      fields >> name;
      run.init[name] = parse_values(fields);
    } else if (key == "step") {
      run.steps.emplace_back();
    } else if (key == "lr") {
      size_t group = 0;
      std::string value;
      fields >> group >> value;
      REQUIRE(group == run.steps.back().lrs.size());
      run.steps.back().lrs.push_back(std::strtod(value.c_str(), nullptr));
    } else if (key == "grad" || key == "after") {
      std::string name;
      fields >> name;
      (key == "grad" ? run.steps.back().grads : run.steps.back().after)[name] =
          parse_values(fields);
    } else if (key == "norm") {
      std::string value;
      fields >> value;
      run.steps.back().has_norm = true;
      run.steps.back().norm = std::strtod(value.c_str(), nullptr);
    } else {
      FAIL("unknown line in " << path << ": " << line);
    }
  }
  return run;
}

// Every run of one optimiser ("SGD", "Adam", "AdamW"), both dtypes, sorted by file name.
inline std::vector<GoldenRun> golden_runs(const std::string& optimizer) {
  const std::filesystem::path dir = std::string(TAPEGRAD_GOLDEN_DIR) + "/optim/runs";
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<GoldenRun> runs;
  for (const std::string& path : paths) {
    GoldenRun run = read_golden_run(path);
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
    for (size_t i = 0; i < params.size(); ++i) {
      const std::vector<double>& g = step.grads.at(run.params[i].name);
      for (int64_t k = 0; k < params[i].numel(); ++k) {
        if (run.dtype == DType::Float32) {
          params[i].grad<float>()[k] = static_cast<float>(g[static_cast<size_t>(k)]);
        } else {
          params[i].grad<double>()[k] = g[static_cast<size_t>(k)];
        }
      }
    }
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
