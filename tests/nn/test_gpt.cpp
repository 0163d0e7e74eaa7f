// Tests for nn/gpt.* (the chapter 4 GPT) against PyTorch's goldens in tests/goldens/gpt/
// (written by make_gpt_goldens.py from the book's classes): names, initial weights, logits in
// training and eval mode, safetensors exchange in both directions, gradients, bad input.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/gradcheck.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/io/safetensors.h>
#include <tapegrad/nn/gpt.h>
#include "tests/compare.h"
#include "tests/goldens.h"

using namespace tapegrad;

namespace {

const std::string kGptDir = std::string(TAPEGRAD_GOLDEN_DIR) + "/gpt/";

// gpt_reference.py's SMALL.
const nn::GPTConfig kSmall{50, 8, 8, 2, 2, 0.1, false};

struct Golden {
  std::vector<uint8_t> file;
  SafetensorsView view;
  explicit Golden(const std::string& name)
      : file(read_whole_file(kGptDir + name)), view(parse_safetensors(file, name)) {}
  // The entry's values widened to double (F32, F64 or I64).
  std::vector<double> values(const std::string& name) const {
    const SafetensorsEntry* e = view.find(name);
    REQUIRE(e != nullptr);
    const auto bytes = view.bytes(*e);
    std::vector<double> out(static_cast<size_t>(e->numel()));
    for (size_t i = 0; i < out.size(); ++i) {
      if (e->dtype == "F32") {
        float v;
        std::memcpy(&v, bytes.data() + 4 * i, 4);
        out[i] = v;
      } else if (e->dtype == "F64") {
        std::memcpy(&out[i], bytes.data() + 8 * i, 8);
      } else {
        int64_t v;
        std::memcpy(&v, bytes.data() + 8 * i, 8);
        out[i] = static_cast<double>(v);
      }
    }
    return out;
  }
  Shape shape(const std::string& name) const {
    const SafetensorsEntry* e = view.find(name);
    REQUIRE(e != nullptr);
    return Shape(std::span<const int64_t>(e->shape));
  }
};

Ids golden_ids(const Golden& g) {
  std::vector<int64_t> ids;
  for (double v : g.values("in_idx")) ids.push_back(static_cast<int64_t>(v));
  return Ids(g.shape("in_idx"), ids);
}

// Within atol + rtol·|torch| per element (the chapter 3 tests' convention, atol 1e-6), reporting
// the worst element.
void check_close(const Tensor& actual, const Golden& g, const std::string& name, double rtol,
                 double atol = 1e-6) {
  REQUIRE(actual.shape() == g.shape(name));
  const auto a = actual.values();
  const auto e = g.values(name);
  double worst = 0.0;  // error / tolerance
  size_t at = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double ratio = std::fabs(a[i] - e[i]) / (atol + rtol * std::fabs(e[i]));
    // NaN is the worst ratio and sticks (`ratio > worst` alone would skip it).
    if (ratio > worst || (std::isnan(ratio) && !std::isnan(worst))) worst = ratio, at = i;
  }
  INFO(name << ": worst element " << at << ": " << a[at] << " vs torch " << e[at] << " (" << worst
            << " of the tolerance)");
  CHECK(worst <= 1.0);
}

// The (name, shape) records of gpt_small_keys.txt under `kind:` ("param", "state"), in torch's
// order.
std::vector<std::pair<std::string, std::string>> golden_keys(const std::string& kind) {
  const auto& file = testing::golden_file("gpt/gpt_small_keys.txt");
  const std::string prefix = kind + ":";
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& name : file.names()) {
    if (name.rfind(prefix, 0) != 0) continue;
    std::string dims;
    for (int64_t d : file[name].ints()) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    out.emplace_back(name.substr(prefix.size()), "[" + dims + "]");
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> keys_of(const nn::StateDict& state) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, p] : state) out.emplace_back(name, p.shape().str());
  return out;
}

}  // namespace

TEST_CASE("GPTModel: named_parameters() and state_dict() are torch's keys", "[gpt][modules]") {
  manual_seed(123);
  nn::GPTModel model(kSmall);
  const auto params = golden_keys("param");
  REQUIRE(params.size() == 31);
  CHECK(keys_of(model.named_parameters()) == params);
  CHECK(keys_of(model.state_dict()) == golden_keys("state"));
  // Parameter::name() is the path too (what checkpoints and drawings show).
  for (const auto& [name, p] : model.named_parameters()) CHECK(p.name() == name);
  CHECK(model.trf_blocks.at<nn::TransformerBlock>(1).ff.layers.at<nn::Linear>(2).weight.name() ==
        "trf_blocks.1.ff.layers.2.weight");
}

TEST_CASE("GPTModel: manual_seed(123) gives torch's weights bit for bit", "[gpt]") {
  const Golden state("gpt_small_state.safetensors");
  manual_seed(123);
  nn::GPTModel model(kSmall);
  for (const auto& [name, p] : model.state_dict()) {
    INFO(name);
    CHECK(p.values() == state.values(name));
  }
}

TEST_CASE("GPTModel: logits equal torch's in training mode (dropout) and eval mode", "[gpt]") {
  const Golden g("gpt_small_logits.safetensors");
  const Ids in_idx = golden_ids(g);
  Tape tape;
  TapeScope scope(tape);
  manual_seed(123);
  nn::GPTModel model(kSmall);
  CHECK(model.training());
  check_close(model(in_idx), g, "logits_train", 1e-5);  // dropout draws after the init, as torch
  model.eval();
  CHECK_FALSE(model.trf_blocks.at<nn::TransformerBlock>(0).att.training());
  check_close(model(in_idx), g, "logits_eval", 1e-5);
}

TEST_CASE("GPTModel: a file saved by torch loads and gives torch's logits", "[gpt][safetensors]") {
  const Golden g("gpt_small_logits.safetensors");
  Tape tape;
  TapeScope scope(tape);
  manual_seed(7);  // other weights: what matters is what load() puts in
  nn::GPTModel model(kSmall);
  model.load(kGptDir + "gpt_small_state.safetensors");
  model.eval();
  check_close(model(golden_ids(g)), g, "logits_eval", 1e-5);
}

TEST_CASE("GPTModel: save() writes what torch's GPTModel loads with strict=True",
          "[gpt][safetensors]") {
  const Golden torch_state("gpt_small_state.safetensors");
  // One folder per process: several checkouts may run their suites on one machine at once.
  const auto dir =
      std::filesystem::temp_directory_path() / ("tapegrad_test_gpt_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "small.safetensors").string();
  manual_seed(123);
  nn::GPTModel model(kSmall);
  model.save(path);

  // The same names, dtypes, shapes and bytes torch's own state_dict has:
  // load_state_dict(strict=True) accepts it (tests/goldens/gpt/torch_roundtrip.py checks that in
  // PyTorch itself, by hand).
  const std::vector<uint8_t> file = read_whole_file(path);
  const SafetensorsView view = parse_safetensors(file, path);
  REQUIRE(view.entries.size() == torch_state.view.entries.size());
  for (const SafetensorsEntry& e : torch_state.view.entries) {
    INFO(e.name);
    const SafetensorsEntry* mine = view.find(e.name);
    REQUIRE(mine != nullptr);
    CHECK(mine->dtype == e.dtype);
    CHECK(mine->shape == e.shape);
    const auto a = view.bytes(*mine), b = torch_state.view.bytes(e);
    CHECK(std::equal(a.begin(), a.end(), b.begin(), b.end()));
  }

  // And back: a model with other weights (float64 even) loads it exactly.
  manual_seed(9);
  nn::GPTModel other(kSmall, DType::Float64);
  other.load(path);
  const auto mine = model.named_parameters(), theirs = other.named_parameters();
  for (size_t i = 0; i < mine.size(); ++i)
    CHECK(mine[i].second.values() == theirs[i].second.values());

  // For the manual check in PyTorch: TAPEGRAD_GPT_SAVE=<dir> keeps a trained-looking model
  // (seed 5) and its eval logits there.
  if (const char* keep = std::getenv("TAPEGRAD_GPT_SAVE")) {
    Tape tape;
    TapeScope scope(tape);
    manual_seed(5);
    nn::GPTModel kept(kSmall);
    kept.eval();
    kept.save(std::string(keep) + "/tapegrad_small.safetensors");
    const Golden g("gpt_small_logits.safetensors");
    Tensor logits = kept(golden_ids(g));
    Parameter out(logits.shape(), DType::Float32, "logits");
    out.assign(logits.values());
    std::vector<SafetensorsTensor> t{
        {"logits",
         "F32",
         std::vector<int64_t>(logits.shape().dims().begin(), logits.shape().dims().end()),
         {static_cast<const uint8_t*>(out.raw_data()), static_cast<size_t>(out.numel() * 4)}}};
    write_safetensors(std::string(keep) + "/tapegrad_small_logits.safetensors", {}, t);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("GPTModel: load_state_dict is strict and all-or-nothing", "[gpt][safetensors][errors]") {
  manual_seed(123);
  nn::GPTModel model(kSmall);
  const auto before = model.state_dict();
  std::vector<std::vector<double>> snapshot;
  for (const auto& [name, p] : before) snapshot.push_back(p.values());
  auto unchanged = [&] {
    const auto now = model.state_dict();
    for (size_t i = 0; i < now.size(); ++i) CHECK(now[i].second.values() == snapshot[i]);
  };

  manual_seed(1);
  nn::GPTModel other(kSmall);
  nn::StateDict missing = other.state_dict();
  missing.erase(missing.begin() + 4);  // trf_blocks.0.att.W_key.weight
  CHECK_THROWS_WITH(model.load_state_dict(missing),
                    Catch::Contains("missing key(s): \"trf_blocks.0.att.W_key.weight\""));
  unchanged();

  nn::StateDict extra = other.state_dict();
  extra.emplace_back("trf_blocks.9.att.W_key.weight", Parameter(Shape{8, 8}));
  CHECK_THROWS_WITH(model.load_state_dict(extra),
                    Catch::Contains("unexpected key(s): \"trf_blocks.9.att.W_key.weight\""));
  unchanged();

  nn::StateDict shaped = other.state_dict();
  shaped.back().second = Parameter(Shape{8, 50});
  CHECK_THROWS_WITH(model.load_state_dict(shaped),
                    Catch::Contains("size mismatch for \"out_head.weight\": copying a tensor of "
                                    "shape [8, 50], the shape in the module is [50, 8]"));
  unchanged();

  nn::StateDict bad_mask = other.state_dict();
  bad_mask[2].second = Parameter(Shape{8, 8});  // trf_blocks.0.att.mask, all zeros
  CHECK_THROWS_WITH(model.load_state_dict(bad_mask), Catch::Contains("trf_blocks.0.att.mask"));
  unchanged();

  // Not strict: the missing one is kept, the rest loaded, the extra one ignored.
  model.load_state_dict(missing, /*strict=*/false);
  CHECK(model.trf_blocks.at<nn::TransformerBlock>(0).att.W_key.weight.values() == snapshot[4]);
  CHECK(model.tok_emb.weight.values() == other.tok_emb.weight.values());
  CHECK_THROWS_WITH(model.load(kGptDir + "does_not_exist.safetensors"),
                    Catch::Contains("does_not_exist"));
}

TEST_CASE("GPTModel: bad input is an Error before anything is recorded", "[gpt][errors]") {
  Tape tape;
  TapeScope scope(tape);
  manual_seed(123);
  nn::GPTModel model(kSmall);
  CHECK_THROWS_WITH(model(Ids::from_rows({{1, 2, 50}})),
                    Catch::Contains("id 50 at element 2 is outside the vocabulary [0, 50)"));
  CHECK_THROWS_WITH(model(Ids::from_rows({{1, -1}})), Catch::Contains("id -1"));
  CHECK_THROWS_WITH(model(Ids::from_rows({{1, 2, 3, 4, 5, 6, 7, 8, 9}})),
                    Catch::Contains("has 9 tokens, more than context_length 8"));
  CHECK_THROWS_WITH(model(Ids::from_row({1, 2})), Catch::Contains("must be [B, T]"));
  CHECK(tape.size() == 0);

  nn::GPTConfig odd = kSmall;
  odd.n_heads = 3;
  CHECK_THROWS_WITH(nn::GPTModel(odd), Catch::Contains("emb_dim 8 must be divisible by n_heads 3"));
  nn::GPTConfig all_dropped = kSmall;
  all_dropped.drop_rate = 1.0;
  CHECK_THROWS_WITH(nn::GPTModel(all_dropped), Catch::Contains("is not in [0, 1)"));
  CHECK_THROWS_WITH(nn::MultiHeadAttention(3, 2, 6, 1.0, 2), Catch::Contains("is not in [0, 1)"));
  CHECK_THROWS_WITH(nn::Dropout(-0.1), Catch::Contains("is not in [0, 1)"));
  // A rejected configuration draws nothing.
  manual_seed(3);
  const uint32_t expected = default_generator().random();
  manual_seed(3);
  CHECK_THROWS(nn::GPTModel(odd));
  CHECK(default_generator().random() == expected);
}

TEST_CASE("GPTModel: gradients of every parameter pass gradcheck (float64, fast mode)",
          "[gpt][gradcheck]") {
  manual_seed(11);
  const nn::GPTConfig tiny{7, 4, 4, 2, 1, 0.0, true};
  nn::GPTModel model(tiny, DType::Float64);
  // LayerNorm's scale/shift start at 1/0: nudge them so their gradients are not special.
  for (const auto& [name, p] : model.named_parameters()) {
    if (name.find("norm") == std::string::npos) continue;
    std::vector<double> v = p.values();
    for (size_t i = 0; i < v.size(); ++i) v[i] += 0.1 * static_cast<double>(i % 3) - 0.05;
    Parameter(p).assign(v);
  }
  const Ids in_idx = Ids::from_rows({{1, 6, 0}, {3, 3, 5}});
  GradcheckOptions options;
  options.fast_mode = true;
  const auto report = gradcheck_parameters(
      "GPTModel", [&]() { return model(in_idx); }, model.parameters(), options);
  INFO(report.message);
  CHECK(report.passed);
  CHECK(report.checked > 0);
}

TEST_CASE("nn::Module: train and eval reach every child and containers name children by index",
          "[modules]") {
  manual_seed(1);
  nn::GPTModel model(kSmall);
  model.eval();
  CHECK_FALSE(model.trf_blocks.training());
  CHECK_FALSE(model.trf_blocks.at<nn::TransformerBlock>(1).drop_shortcut.training());
  model.train();
  CHECK(model.trf_blocks.at<nn::TransformerBlock>(1).ff.layers[1].training());
  CHECK(model.num_parameters() ==
        50 * 8 + 8 * 8 + 2 * (4 * 64 + 8 + 2 * (8 * 32) + 32 + 8 + 32) + 16 + 50 * 8);
  const auto children = model.named_children();
  REQUIRE(children.size() == 6);
  CHECK(children[3].first == "trf_blocks");
  CHECK(children[3].second->named_children()[1].first == "1");

  // modules(): the model, then each child before its own children, in registration order (the
  // order of a recursive walk, as torch's modules()).
  std::vector<nn::Module*> expected;
  std::function<void(nn::Module&)> walk = [&](nn::Module& m) {
    expected.push_back(&m);
    for (auto& [name, child] : m.named_children()) walk(*child);
  };
  walk(model);
  const std::vector<nn::Module*> all = model.modules();
  CHECK(all == expected);
  REQUIRE(all.size() > 1);
  CHECK(all[0] == &model);
  CHECK(all[1] == children[0].second);
  int64_t linears = 0;
  for (nn::Module* m : all) linears += dynamic_cast<nn::Linear*>(m) != nullptr;
  CHECK(linears == 2 * 6 + 1);  // per block W_query, W_key, W_value, out_proj, ff's two; out_head

  nn::MultiHeadAttentionWrapper wrapper(3, 2, 6, 0.0, 2);
  const auto state = wrapper.state_dict();
  REQUIRE(state.size() == 8);
  // torch's order: a module's buffers before its children's entries.
  CHECK(state[0].first == "heads.0.mask");
  CHECK(state[0].second.shape() == Shape{6, 6});
  CHECK(state[1].first == "heads.0.W_query.weight");
  CHECK(state[4].first == "heads.1.mask");
  CHECK(wrapper.heads[1].name() == "head 1");
}
