// Tests for io/checkpoint.cpp: round trips, bit-identical resume, all-or-nothing loads,
// damaged files, a writer killed with SIGKILL, and files read and written by plain Python.
#include <tapegrad/io/checkpoint.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <thread>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/io/safetensors.h>
#include <tapegrad/nn/init.h>
#include <tapegrad/ops/ops.h>
#include <tapegrad/optim/optim.h>

#include "tests/compare.h"
#include "tests/temp_dir.h"

using namespace tapegrad;
using Catch::Contains;

namespace {

using tapegrad::testing::TempDir;

using tapegrad::testing::parameter_bits;

// The attention model of chapter 3 with an output projection: q, k, v projections, causal
// mask, softmax, dropout, and a linear layer; float32, initialised as nn.Linear.
struct Model {
  Parameter w_query, w_key, w_value, out_w, out_b;

  explicit Model(Generator& g, int64_t d_in = 6, int64_t d_out = 4) {
    auto weight = [&](int64_t out, int64_t in, const char* name) {
      Parameter w({out, in}, DType::Float32, name);
      nn::linear_init_weight(w.data<float>(), out, in, g);
      return w;
    };
    w_query = weight(d_out, d_in, "W_query");
    w_key = weight(d_out, d_in, "W_key");
    w_value = weight(d_out, d_in, "W_value");
    out_w = weight(d_in, d_out, "out.weight");
    out_b = Parameter({d_in}, DType::Float32, "out.bias");
    nn::linear_init_bias(out_b.data<float>(), d_in, d_out, g);
  }
  std::vector<Parameter> list() const { return {w_query, w_key, w_value, out_w, out_b}; }
  NamedParameters named() const {
    NamedParameters n;
    for (const Parameter& p : list()) n.emplace_back(p.name(), p);
    return n;
  }
};

// One batch drawn from `g`, and the loss.
Tensor model_loss(const Model& m, Generator& g) {
  const Tensor x = rand({2, 5, 6}, DType::Float32, g);
  const Tensor target = rand({2, 5, 6}, DType::Float32, g);
  const Tensor q = linear(x, m.w_query), k = linear(x, m.w_key), v = linear(x, m.w_value);
  const Tensor scores = causal_mask(matmul(q, transpose(k, 1, 2)));
  const Tensor weights = dropout(softmax(div_scalar(scores, 2.0), -1), 0.2, true, g);
  return mse_loss(linear(matmul(weights, v), m.out_w, m.out_b), target);
}

// A training run: everything that a checkpoint must capture to resume it exactly.
struct Run {
  Generator g;
  Model model;
  AdamW optimizer;
  WarmupCosineLR schedule;
  std::vector<double> losses;

  explicit Run(uint64_t seed)
      : g(seed),
        model(g),
        optimizer(model.list(), AdamWOptions{.lr = 0.05, .weight_decay = 0.1}),
        schedule(optimizer, 3, 12, 0.25) {}

  void train(int steps) {
    Tape tape;
    TapeScope scope(tape);
    for (int s = 0; s < steps; ++s) {
      tape.reset();
      optimizer.zero_grad();
      Tensor loss = model_loss(model, g);
      loss.backward();
      clip_grad_norm_(optimizer, 1.0);
      optimizer.step();
      schedule.step();
      losses.push_back(loss.item());
    }
  }
  CheckpointExtras extras() { return {&optimizer, &schedule, {{"data", &g}}, {}}; }
};

// Everything a load may touch, to prove a failed one touched nothing.
struct Snapshot {
  std::vector<std::vector<uint8_t>> params;
  OptimizerState optimizer;
  SchedulerState schedule;
  std::vector<uint64_t> rng;

  explicit Snapshot(Run& r)
      : optimizer(r.optimizer.state()), schedule(r.schedule.state()), rng(r.g.state()) {
    for (const Parameter& p : r.model.list()) params.push_back(parameter_bits(p));
  }
};

bool same_bits(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

bool same_state(const OptimizerState& a, const OptimizerState& b) {
  if (a.optimizer != b.optimizer || a.step != b.step || a.scalars.size() != b.scalars.size() ||
      a.tensors.size() != b.tensors.size()) {
    return false;
  }
  for (size_t i = 0; i < a.scalars.size(); ++i) {
    if (a.scalars[i].name != b.scalars[i].name ||
        !same_bits(a.scalars[i].value, b.scalars[i].value))
      return false;
  }
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const StateTensor &x = a.tensors[i], &y = b.tensors[i];
    if (x.name != y.name || x.shape != y.shape || x.dtype != y.dtype ||
        x.values.size() != y.values.size())
      return false;
    for (size_t k = 0; k < x.values.size(); ++k) {
      if (!same_bits(x.values[k], y.values[k])) return false;
    }
  }
  return true;
}

bool operator==(const Snapshot& a, const Snapshot& b) {
  bool base_lrs = a.schedule.base_lrs.size() == b.schedule.base_lrs.size();
  for (size_t i = 0; base_lrs && i < a.schedule.base_lrs.size(); ++i) {
    base_lrs = same_bits(a.schedule.base_lrs[i], b.schedule.base_lrs[i]);
  }
  return a.params == b.params && same_state(a.optimizer, b.optimizer) &&
         a.schedule.step == b.schedule.step && base_lrs && a.rng == b.rng;
}

std::string load_error(const std::function<void()>& load) {
  try {
    load();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("checkpoint: parameters round-trip bit for bit, special values included",
          "[checkpoint]") {
  TempDir dir("tapegrad_checkpoint");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Parameter a =
      Parameter::from_values({2, 3}, {1.0 / 3, -0.0, 1e-40, inf, -inf, nan}, DType::Float32, "a");
  Parameter b =
      Parameter::from_values({2, 1, 1, 2}, {1.0 / 3, -0.0, 4.9e-324, -nan}, DType::Float64, "b");
  Parameter empty({0, 4}, DType::Float32, "empty");
  Parameter scalar_p = Parameter::from_values({}, {2.5}, DType::Float64, "s");
  const NamedParameters named = {{"layer.a", a}, {"b", b}, {"empty", empty}, {"s", scalar_p}};
  CheckpointExtras extras;
  extras.metadata = {{"epoch", "3"}, {"note", "caf\xc3\xa9 \"quoted\"\n"}};
  save_checkpoint(dir.file("c.safetensors"), named, extras);

  Parameter a2({2, 3}, DType::Float32), b2({2, 1, 1, 2}, DType::Float64), e2({0, 4}),
      s2({}, DType::Float64);
  CheckpointExtras loaded;
  load_checkpoint(dir.file("c.safetensors"), {{"layer.a", a2}, {"b", b2}, {"empty", e2}, {"s", s2}},
                  loaded);
  CHECK(parameter_bits(a2) == parameter_bits(a));
  CHECK(parameter_bits(b2) == parameter_bits(b));
  CHECK(parameter_bits(s2) == parameter_bits(scalar_p));
  CHECK(loaded.metadata == extras.metadata);
}

TEST_CASE("checkpoint: optimiser, schedule and generator state round-trip", "[checkpoint]") {
  TempDir dir("tapegrad_checkpoint");
  Run a(11);
  a.train(4);
  CheckpointExtras extras = a.extras();
  save_checkpoint(dir.file("c.safetensors"), a.model.named(), extras);
  Run b(99);  // other weights, a fresh optimiser (no state yet), another stream
  CheckpointExtras into = b.extras();
  load_checkpoint(dir.file("c.safetensors"), b.model.named(), into);
  CHECK(Snapshot(b) == Snapshot(a));
  CHECK(b.optimizer.step_count() == 4);
  CHECK(b.schedule.last_step() == 4);
  for (size_t g = 0; g < a.optimizer.num_groups(); ++g)
    CHECK(same_bits(b.optimizer.lr(g), a.optimizer.lr(g)));
  // Loading only the weights (for inference) ignores the rest.
  Run c(5);
  load_checkpoint(dir.file("c.safetensors"), c.model.named());
  CHECK(Snapshot(c).params == Snapshot(a).params);
  CHECK(c.optimizer.step_count() == 0);
}

TEST_CASE("checkpoint: resuming gives the uninterrupted run's trajectory bit for bit",
          "[checkpoint]") {
  TempDir dir("tapegrad_checkpoint");
  Run whole(42);
  whole.train(12);

  Run first(42);
  first.train(5);
  CheckpointExtras extras = first.extras();
  extras.metadata["step"] = "5";
  save_checkpoint(dir.file("step5.safetensors"), first.model.named(), extras);

  // A fresh process (fork: nothing of this one's run reaches it but the file) with other
  // initial weights and another random stream loads step 5, trains 7 steps and saves the end
  // state with its losses (as bit patterns) in the metadata.
  const std::string end_path = dir.file("step12.safetensors");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int code = 0;
    try {
      Run resumed(1234);
      CheckpointExtras into = resumed.extras();
      load_checkpoint(dir.file("step5.safetensors"), resumed.model.named(), into);
      if (into.metadata.at("step") != "5") code = 3;
      resumed.train(7);
      CheckpointExtras out = resumed.extras();
      for (size_t i = 0; i < resumed.losses.size(); ++i) {
        out.metadata["loss." + std::to_string(i)] =
            std::to_string(std::bit_cast<uint64_t>(resumed.losses[i]));
      }
      save_checkpoint(end_path, resumed.model.named(), out);
    } catch (...) {
      code = 2;
    }
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);

  Run ended(99);  // this process reads the fresh process's end state
  CheckpointExtras from = ended.extras();
  load_checkpoint(end_path, ended.model.named(), from);
  std::vector<double> losses = first.losses;
  for (int i = 0; i < 7; ++i) {
    losses.push_back(
        std::bit_cast<double>(std::stoull(from.metadata.at("loss." + std::to_string(i)))));
  }
  REQUIRE(losses.size() == whole.losses.size());
  for (size_t i = 0; i < losses.size(); ++i) {
    INFO("step " << i << ": " << losses[i] << " vs " << whole.losses[i]);
    CHECK(same_bits(losses[i], whole.losses[i]));
  }
  CHECK(Snapshot(ended) == Snapshot(whole));
  CHECK(whole.losses.back() < whole.losses.front());  // it did train
}

TEST_CASE("checkpoint: a load that does not fit throws and changes nothing", "[checkpoint]") {
  TempDir dir("tapegrad_checkpoint");
  Run source(3);
  source.train(2);
  CheckpointExtras extras = source.extras();
  const std::string path = dir.file("c.safetensors");
  save_checkpoint(path, source.model.named(), extras);
  const std::string weights_only = dir.file("weights.safetensors");
  save_checkpoint(weights_only, source.model.named());

  struct Row {
    const char* what;
    std::function<void(Run&, NamedParameters&, CheckpointExtras&, std::string&)> setup;
    std::vector<std::string> fragments;
  };
  const std::vector<Row> rows = {
      {"a parameter of another shape",
       [](Run&, NamedParameters& n, CheckpointExtras&, std::string&) {
         n[1].second = Parameter({5, 6}, DType::Float32, "W_key");
       },
       {"c.safetensors: parameter \"W_key\" [5, 6] float32 does not match the checkpoint's "
        "\"W_key\" [4, 6] F32 (shape differs)"}},
      {"a parameter of another dtype",
       [](Run&, NamedParameters& n, CheckpointExtras&, std::string&) {
         n[4].second = Parameter({6}, DType::Float64, "out.bias");
       },
       {"parameter \"out.bias\" [6] float64 does not match the checkpoint's \"out.bias\" [6] F32 "
        "(dtype differs)"}},
      {"a parameter the file lacks",
       [](Run&, NamedParameters& n, CheckpointExtras&, std::string&) {
         n.emplace_back("extra", Parameter({2}, DType::Float32, "extra"));
       },
       {"the model's parameter \"extra\" [2] float32 is not in the checkpoint"}},
      {"a tensor the model lacks",
       [](Run&, NamedParameters& n, CheckpointExtras&, std::string&) { n.pop_back(); },
       {"the checkpoint holds \"out.bias\" [6] F32, which the model has no parameter for"}},
      {"a parameter listed twice",
       [](Run&, NamedParameters& n, CheckpointExtras&, std::string&) { n.push_back(n[0]); },
       {"parameter name \"W_query\" is given twice"}},
      {"another optimiser's state",
       [](Run& r, NamedParameters&, CheckpointExtras& e, std::string&) {
         static std::unique_ptr<SGD> sgd;
         sgd = std::make_unique<SGD>(r.model.list(), 0.1);
         e.optimizer = sgd.get();
         e.scheduler = nullptr;
       },
       {"SGD: load_state: the state is from AdamW, not SGD"}},
      {"an optimiser over other parameters",
       [](Run& r, NamedParameters&, CheckpointExtras& e, std::string&) {
         static std::unique_ptr<AdamW> fewer;
         fewer = std::make_unique<AdamW>(std::vector<Parameter>{r.model.w_query});
         e.optimizer = fewer.get();
         e.scheduler = nullptr;
       },
       {"AdamW: load_state: \"param.1.", "this optimizer has 1 parameter"}},
      {"a generator the file lacks",
       [](Run& r, NamedParameters&, CheckpointExtras& e, std::string&) {
         e.generators = {{"data", &r.g}, {"dropout", &r.g}};
       },
       {"the checkpoint holds no state for generator \"dropout\""}},
      {"an optimiser for a weights-only file",
       [&](Run&, NamedParameters&, CheckpointExtras& e, std::string& p) {
         p = weights_only;
         e.generators.clear();
       },
       {"weights.safetensors: the checkpoint holds no optimizer state"}},
      {"a missing file",
       [&](Run&, NamedParameters&, CheckpointExtras&, std::string& p) {
         p = dir.file("none.safetensors");
       },
       {"cannot open", "none.safetensors: No such file or directory"}},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    Run target(77);
    target.train(1);  // has optimiser state of its own, which must survive
    NamedParameters named = target.model.named();
    CheckpointExtras into = target.extras();
    std::string from = path;
    row.setup(target, named, into, from);
    const Snapshot before(target);
    std::vector<std::vector<uint8_t>> named_before;
    for (const auto& [n, p] : named) named_before.push_back(parameter_bits(p));
    const std::string error = load_error([&] { load_checkpoint(from, named, into); });
    for (const std::string& fragment : row.fragments) CHECK_THAT(error, Contains(fragment));
    CHECK(Snapshot(target) == before);
    for (size_t i = 0; i < named.size(); ++i)
      CHECK(parameter_bits(named[i].second) == named_before[i]);
  }
}

TEST_CASE("checkpoint: a scheduler restored before the optimiser refuses is rolled back",
          "[checkpoint]") {
  TempDir dir("tapegrad_checkpoint");
  Run source(3);
  source.train(3);
  CheckpointExtras extras = source.extras();
  save_checkpoint(dir.file("c.safetensors"), source.model.named(), extras);

  Generator g(1);
  Model m(g);
  SGD sgd(m.list(), SGDOptions{.lr = 0.3, .momentum = 0.9});
  StepLR schedule(sgd, 2, 0.5);
  for (int i = 0; i < 3; ++i) {
    sgd.step();
    schedule.step();
  }
  const OptimizerState before = sgd.state();
  const SchedulerState schedule_before = schedule.state();
  CheckpointExtras into{&sgd, &schedule, {}, {}};
  CHECK_THROWS_WITH(load_checkpoint(dir.file("c.safetensors"), m.named(), into),
                    Contains("SGD: load_state: the state is from AdamW, not SGD"));
  CHECK(same_state(sgd.state(), before));
  CHECK(schedule.state().step == schedule_before.step);
  CHECK(same_bits(sgd.lr(0), 0.3 * 0.5));
}

TEST_CASE("checkpoint: saving refuses bad names and leaves the old file", "[checkpoint]") {
  TempDir dir("tapegrad_checkpoint");
  const std::string path = dir.file("c.safetensors");
  Parameter p = Parameter::from_values({2}, {1, 2}, DType::Float32, "p");
  save_checkpoint(path, {{"p", p}});
  const std::vector<uint8_t> before = read_whole_file(path);
  CHECK_THROWS_WITH(save_checkpoint(path, {{"p", p}, {"p", p}}),
                    Contains("parameter name \"p\" is used twice"));
  CHECK_THROWS_WITH(save_checkpoint(path, {{"optim.x", p}}), Contains("is empty or reserved"));
  CHECK_THROWS_WITH(save_checkpoint(path, {{"", p}}), Contains("is empty or reserved"));
  CHECK_THROWS_WITH(save_checkpoint(path, {{"q", Parameter()}}),
                    Contains("parameter \"q\" is undefined"));
  CheckpointExtras reserved;
  reserved.metadata["tapegrad.format"] = "2";
  CHECK_THROWS_WITH(save_checkpoint(path, {{"p", p}}, reserved),
                    Contains("metadata key \"tapegrad.format\" is reserved"));
  CHECK(read_whole_file(path) == before);
}

TEST_CASE("checkpoint: every truncation and every damaged byte is rejected", "[checkpoint]") {
  TempDir dir("tapegrad_checkpoint");
  Generator g(5);
  Parameter w = Parameter::from_values({2, 3}, {1, 2, 3, 4, 5, 6}, DType::Float32, "w");
  Parameter b = Parameter::from_values({3}, {0.5, -1, 2}, DType::Float64, "b");
  Adam adam({w, b});
  w.grad<float>()[0] = 1.0f;
  adam.step();
  CheckpointExtras extras{&adam, nullptr, {{"default", &g}}, {{"epoch", "1"}}};
  const std::string path = dir.file("c.safetensors");
  save_checkpoint(path, {{"w", w}, {"b", b}}, extras);
  const std::vector<uint8_t> file = read_whole_file(path);

  Generator g2(6);
  Parameter w2({2, 3}, DType::Float32, "w"), b2({3}, DType::Float64, "b");
  Adam adam2({w2, b2});
  CheckpointExtras into{&adam2, nullptr, {{"default", &g2}}, {}};
  const NamedParameters named = {{"w", w2}, {"b", b2}};
  const std::vector<uint8_t> w_before = parameter_bits(w2), b_before = parameter_bits(b2);
  const std::vector<uint64_t> g_before = g2.state();
  auto unchanged = [&] {
    return parameter_bits(w2) == w_before && parameter_bits(b2) == b_before &&
           g2.state() == g_before && adam2.step_count() == 0;
  };
  int truncations = 0, damages = 0;
  for (size_t length = 0; length < file.size(); ++length) {
    const std::string error = load_error(
        [&] { load_checkpoint_bytes(std::span(file).subspan(0, length), "cut", named, into); });
    if (error.rfind("cut: ", 0) == 0 && unchanged()) ++truncations;
  }
  CHECK(truncations == static_cast<int>(file.size()));
  for (size_t at = 0; at < file.size(); ++at) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}}) {
      std::vector<uint8_t> damaged = file;
      damaged[at] ^= flip;
      const std::string error =
          load_error([&] { load_checkpoint_bytes(damaged, "damaged", named, into); });
      if (error.rfind("damaged: ", 0) == 0 && unchanged()) {
        ++damages;
      } else {
        FAIL_CHECK("byte " << at << " ^ " << int(flip) << ": " << error);
      }
    }
  }
  CHECK(damages == static_cast<int>(2 * file.size()));
  load_checkpoint_bytes(file, "intact", named, into);  // and the intact file loads
  CHECK(parameter_bits(w2) == parameter_bits(w));
  CHECK(g2.state() == g.state());
  CHECK(into.metadata.at("epoch") == "1");
}

TEST_CASE("checkpoint: plain Python reads ours and writes one we load", "[checkpoint][python]") {
  TempDir dir("tapegrad_checkpoint");
  const std::string script = std::string(TAPEGRAD_SOURCE_DIR) + "/tests/io/checkpoint_interop.py";
  Generator g(8);
  Parameter w =
      Parameter::from_values({2, 3}, {0.1, -0.0, 1e-40, 3e38, -2.5, 1.0 / 3}, DType::Float32, "W");
  Parameter b = Parameter::from_values({3}, {1.0 / 3, -1e-310, 2}, DType::Float64, "b");
  SGD sgd({w, b}, SGDOptions{.lr = 0.1, .momentum = 0.9});
  w.grad<float>()[1] = 0.5f;
  sgd.step();
  CheckpointExtras extras{&sgd, nullptr, {{"default", &g}}, {{"epoch", "2"}}};
  const std::string ours = dir.file("ours.safetensors");
  save_checkpoint(ours, {{"W", w}, {"b", b}}, extras);

  const std::string listing = dir.file("listing.txt");
  REQUIRE(std::system((std::string(TAPEGRAD_PYTHON3) + " '" + script + "' read '" + ours + "' '" +
                       listing + "'")
                          .c_str()) == 0);
  std::ifstream in(listing);
  std::map<std::string, std::vector<std::string>> seen;
  std::map<std::string, std::string> meta;
  std::vector<std::string> decoders;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name;
    fields >> name;
    if (name == "decoders") {
      std::string decoder;
      while (fields >> decoder) decoders.push_back(decoder);
      continue;
    }
    if (name == "meta") {
      std::string key, value;
      fields >> key;
      std::getline(fields, value);
      meta[key] = value.substr(1);
      continue;
    }
    std::string word;
    std::vector<std::string> values;
    bool after_colon = false;
    while (fields >> word) {
      if (after_colon) values.push_back(word);
      after_colon = after_colon || word == ":";
    }
    seen[name] = values;
  }
  auto check_values = [&](const std::string& name, const Parameter& p) {
    INFO(name);
    REQUIRE(seen.count(name) == 1);
    const std::vector<double> ours_values = p.values();
    REQUIRE(seen[name].size() == ours_values.size());
    for (size_t i = 0; i < ours_values.size(); ++i) {
      CHECK(same_bits(std::strtod(seen[name][i].c_str(), nullptr), ours_values[i]));
    }
  };
  check_values("W", w);
  check_values("b", b);
  REQUIRE(seen.count("optim.param.0.momentum_buffer") == 1);
  CHECK(std::strtod(seen["optim.param.0.momentum_buffer"][1].c_str(), nullptr) == 0.5);
  REQUIRE(seen.count("rng.default") == 1);
  CHECK(seen["rng.default"].size() == Generator::kStateSize);
  CHECK(std::stoull(seen["rng.default"][1]) == 8);  // the seed word
  CHECK(meta["optim.optimizer"] == "SGD");
  CHECK(meta["optim.group.0.lr"] == "0.1");
  CHECK(meta["epoch"] == "2");
  CHECK(meta["tapegrad.format"] == "1");
  // struct and numpy always decode the floats; where python3-torch is installed (tests never
  // need it), torch too, as safetensors.torch.load_file does (frombuffer, then the shape).
  REQUIRE(decoders.size() >= 2);
  CHECK(decoders[0] == "struct");
  CHECK(decoders[1] == "numpy");
  const bool have_torch =
      std::system((std::string(TAPEGRAD_PYTHON3) + " -c 'import torch' 2>/dev/null").c_str()) == 0;
  CHECK(decoders.size() == (have_torch ? 3u : 2u));
  if (have_torch) CHECK(decoders[2] == "torch");

  const std::string theirs = dir.file("theirs.safetensors");
  REQUIRE(std::system((std::string(TAPEGRAD_PYTHON3) + " '" + script + "' write '" + theirs + "'")
                          .c_str()) == 0);
  Parameter w2({2, 3}, DType::Float32), b2({3}, DType::Float64);
  CheckpointExtras loaded;
  load_checkpoint(theirs, {{"W", w2}, {"b", b2}}, loaded);
  CHECK(w2.values() == std::vector<double>{-1, -0.5, 0, 0.5, 1, 1.5});
  CHECK(b2.values() == std::vector<double>{1.0 / 3, 1.0 / 4, 1.0 / 5});
  CHECK(loaded.metadata == std::map<std::string, std::string>{{"epoch", "7"}, {"format", "pt"}});
}

TEST_CASE("checkpoint: a writer killed with SIGKILL leaves the previous checkpoint intact",
          "[checkpoint][kill]") {
  TempDir dir("tapegrad_checkpoint");
  const std::string path = dir.file("model.safetensors");
  // 4M float32 (16 MB): each save takes long enough to be killed in the middle of it.
  constexpr int64_t kBig = int64_t{1} << 22;
  Parameter big({kBig}, DType::Float32, "big");
  Parameter small({3}, DType::Float64, "small");
  const NamedParameters named = {{"big", big}, {"small", small}};
  auto fill = [&](int64_t version) {  // every element tells the version it belongs to
    float* v = big.data<float>();
    for (int64_t i = 0; i < kBig; ++i) v[i] = static_cast<float>(version * 1000 + i % 1000);
    for (int i = 0; i < 3; ++i) small.data<double>()[i] = static_cast<double>(version) + i / 4.0;
  };
  auto save_version = [&](int64_t version) {
    fill(version);
    CheckpointExtras extras;
    extras.metadata["version"] = std::to_string(version);
    save_checkpoint(path, named, extras);
  };
  auto temporaries = [&] {
    std::vector<std::filesystem::path> found;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path)) {
      if (entry.path().filename().string().rfind("model.safetensors.tmp.", 0) == 0) {
        found.push_back(entry.path());
      }
    }
    return found;
  };

  save_version(0);
  int64_t next_version = 1;
  int killed_mid_write = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  // The README's claim: three kills that land mid-write (a temporary file left behind). A kill
  // can rarely land just after a rename; such a round does not count, so up to 10 are run.
  int round = 0;
  for (; killed_mid_write < 3 && round < 10; ++round) {
    int done[2];
    REQUIRE(::pipe(done) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {  // the writer: saves new versions until killed (bounded, just in case)
      ::close(done[0]);
      try {
        for (int64_t v = next_version; v < next_version + 1000; ++v) {
          save_version(v);
          const char byte = 1;
          if (::write(done[1], &byte, 1) != 1) ::_exit(3);
        }
      } catch (...) {
        ::_exit(2);
      }
      ::_exit(0);
    }
    ::close(done[1]);
    // Let one save complete, then kill the writer as soon as its next temporary file appears.
    char byte = 0;
    REQUIRE(::read(done[0], &byte, 1) == 1);
    const int64_t completed = next_version;
    while (temporaries().empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ::kill(child, SIGKILL);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    ::close(done[0]);
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);

    const std::vector<std::filesystem::path> left = temporaries();
    if (!left.empty()) ++killed_mid_write;
    // The checkpoint at `path` is a complete version: the last one saved, or the next one when
    // the kill landed just after its rename.
    fill(-1);
    CheckpointExtras loaded;
    REQUIRE_NOTHROW(load_checkpoint(path, named, loaded));
    const int64_t version = std::stoll(loaded.metadata.at("version"));
    INFO("round " << round << ": completed " << completed << ", loaded " << version);
    CHECK((version == completed || (version == completed + 1 && left.empty())));
    const std::vector<uint8_t> loaded_big = parameter_bits(big),
                               loaded_small = parameter_bits(small);
    fill(version);
    CHECK(parameter_bits(big) == loaded_big);
    CHECK(parameter_bits(small) == loaded_small);
    // A temporary file cut short by the kill is itself rejected (or complete, when the kill came
    // during fsync).
    for (const auto& t : left) {
      const std::string error = load_error([&] { load_checkpoint(t.string(), named); });
      if (error != "(no error)") {
        CHECK_THAT(error, Contains(t.string() + ": "));
      }
      std::filesystem::remove(t);
    }
    next_version = version + 1;
  }
  INFO(round << " rounds");
  CHECK(killed_mid_write == 3);
  CHECK(std::chrono::steady_clock::now() < deadline);
}
