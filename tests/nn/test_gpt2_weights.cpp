// Tests for nn/gpt2_weights.* (loading a Hugging Face GPT-2 checkpoint into GPTModel)
// against tests/goldens/gpt2/ (make_gpt2_goldens.py): a tiny GPT-2-shaped model with random
// weights in HF's layout; its logits and greedy tokens computed by PyTorch; bad files.
#include <unistd.h>
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/io/safetensors.h>
#include <tapegrad/nn/gpt2_weights.h>
#include "tests/compare.h"

using namespace tapegrad;

namespace {

const std::string kGpt2Dir = std::string(TAPEGRAD_GOLDEN_DIR) + "/gpt2/";
const std::string kWeights = kGpt2Dir + "gpt2_tiny.safetensors";

// make_gpt2_goldens.py's TINY.
const nn::GPTConfig kGpt2Tiny{97, 16, 24, 3, 2, 0.0, true};

struct File {
  std::vector<uint8_t> bytes;
  SafetensorsView view;
  explicit File(const std::string& path)
      : bytes(read_whole_file(path)), view(parse_safetensors(bytes, path)) {}
  std::vector<double> values(const std::string& name) const {
    const SafetensorsEntry* e = view.find(name);
    REQUIRE(e != nullptr);
    const auto b = view.bytes(*e);
    std::vector<double> out(static_cast<size_t>(e->numel()));
    for (size_t i = 0; i < out.size(); ++i) {
      if (e->dtype == "F32") {
        float v;
        std::memcpy(&v, b.data() + 4 * i, 4);
        out[i] = v;
      } else if (e->dtype == "F64") {
        std::memcpy(&out[i], b.data() + 8 * i, 8);
      } else {
        int64_t v;
        std::memcpy(&v, b.data() + 8 * i, 8);
        out[i] = static_cast<double>(v);
      }
    }
    return out;
  }
  Ids ids(const std::string& name) const {
    std::vector<int64_t> v;
    for (double d : values(name)) v.push_back(static_cast<int64_t>(d));
    return Ids(Shape(std::span<const int64_t>(view.find(name)->shape)), v);
  }
};

// A per-process scratch folder.
std::filesystem::path scratch() {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tapegrad_test_gpt2_weights_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// Writes a copy of the tiny checkpoint to `path`, each entry passed through `edit` (which may
// rename it, change its shape and bytes, or return false to drop it).
void rewrite(const std::string& path,
             const std::function<bool(SafetensorsTensor&, std::vector<uint8_t>&)>& edit) {
  const File src(kWeights);
  std::vector<std::vector<uint8_t>> storage;
  storage.reserve(src.view.entries.size());
  std::vector<SafetensorsTensor> out;
  for (const SafetensorsEntry& e : src.view.entries) {
    const auto b = src.view.bytes(e);
    storage.emplace_back(b.begin(), b.end());
    SafetensorsTensor t{e.name, e.dtype, e.shape, {}};
    if (!edit(t, storage.back())) continue;
    t.bytes = storage.back();
    out.push_back(t);
  }
  write_safetensors(path, {{"format", "pt"}}, out);
}

// Within atol + 1e-5·|torch| per element; the golden logits are exact (float64), and atol is the
// suite's 1e-6 for a float64 model. A float32 model gets atol 1e-5: float32 rounding through the
// two blocks moves these logits (magnitude up to ~18) by ~3e-6, torch's float32 forward as much.
void check_logits(const Tensor& logits, const File& g, double atol = 1e-6) {
  REQUIRE(logits.shape() == Shape(std::span<const int64_t>(g.view.find("logits")->shape)));
  const auto a = logits.values();
  const auto e = g.values("logits");
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = testing::worse(worst, std::fabs(a[i] - e[i]) / (atol + 1e-5 * std::fabs(e[i])));
  }
  INFO("worst error / tolerance " << worst);
  CHECK(worst <= 1.0);
}

// The book's generate_text_simple: append the argmax of the last logits row, the context cropped
// to the last context_length tokens.
Ids greedy(const nn::GPTModel& model, const Ids& prompt, int64_t new_tokens) {
  const int64_t B = prompt.size(0), ctx = model.config().context_length;
  std::vector<std::vector<int64_t>> rows(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < prompt.size(1); ++t) rows[b].push_back(prompt[b * prompt.size(1) + t]);
  }
  for (int64_t step = 0; step < new_tokens; ++step) {
    Tape tape;
    TapeScope scope(tape);
    const int64_t n = static_cast<int64_t>(rows[0].size());
    const int64_t T = std::min(n, ctx);
    std::vector<int64_t> cond;
    for (const auto& r : rows) cond.insert(cond.end(), r.end() - T, r.end());
    const auto logits = model(Ids(Shape{B, T}, cond)).values();  // [B, T, V]
    const int64_t V = model.config().vocab_size;
    for (int64_t b = 0; b < B; ++b) {
      const size_t last = static_cast<size_t>((b * T + T - 1) * V);
      int64_t best = 0;
      for (int64_t v = 1; v < V; ++v) {
        if (logits[last + v] > logits[last + best]) best = v;
      }
      rows[b].push_back(best);
    }
  }
  std::vector<int64_t> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return Ids(Shape{B, static_cast<int64_t>(rows[0].size())}, flat);
}

}  // namespace

TEST_CASE("gpt2_config: the four GPT-2 sizes by the book's, HF's and short names", "[gpt2]") {
  CHECK(nn::gpt2_config("gpt2-small (124M)").emb_dim == 768);
  CHECK(nn::gpt2_config("gpt2").n_layers == 12);
  CHECK(nn::gpt2_config("gpt2-medium").n_heads == 16);
  CHECK(nn::gpt2_config("774M").n_layers == 36);
  CHECK(nn::gpt2_config("xl").emb_dim == 1600);
  CHECK(nn::gpt2_config("gpt2-xl (1558M)").n_heads == 25);
  for (const auto& cfg :
       {nn::GPT2_CONFIG_124M, nn::GPT2_CONFIG_355M, nn::GPT2_CONFIG_774M, nn::GPT2_CONFIG_1558M}) {
    CHECK(cfg.qkv_bias);
    CHECK(cfg.context_length == 1024);
    CHECK(cfg.vocab_size == 50257);
    CHECK_NOTHROW(nn::check_config(cfg));
  }
  CHECK_THROWS_WITH(nn::gpt2_config("gpt3"), Catch::Contains("gpt3") && Catch::Contains("gpt2-xl"));
}

TEST_CASE("infer_gpt2_config reads the sizes from the file's shapes", "[gpt2]") {
  const nn::GPTConfig cfg = nn::infer_gpt2_config(kWeights, "", 3);
  CHECK(cfg.vocab_size == kGpt2Tiny.vocab_size);
  CHECK(cfg.context_length == kGpt2Tiny.context_length);
  CHECK(cfg.emb_dim == kGpt2Tiny.emb_dim);
  CHECK(cfg.n_heads == 3);
  CHECK(cfg.n_layers == kGpt2Tiny.n_layers);
  CHECK(cfg.qkv_bias);
  // emb_dim 24 is none of GPT-2's sizes: n_heads must be given.
  CHECK_THROWS_WITH(nn::infer_gpt2_config(kWeights), Catch::Contains("emb_dim 24"));
  CHECK_THROWS_WITH(nn::infer_gpt2_config(kWeights, "gpt2"),
                    Catch::Contains("emb_dim 24") && Catch::Contains("768"));
}

TEST_CASE("load_gpt2_weights: logits and greedy tokens equal PyTorch's", "[gpt2]") {
  const File g(kGpt2Dir + "gpt2_tiny_goldens.safetensors");
  const DType dtype = GENERATE(DType::Float32, DType::Float64);
  INFO((dtype == DType::Float32 ? "float32" : "float64"));
  manual_seed(5);  // any weights: what matters is what the loader puts in
  nn::GPTModel model(kGpt2Tiny, dtype);
  nn::load_gpt2_weights(model, kWeights);
  model.eval();
  {
    Tape tape;
    TapeScope scope(tape);
    check_logits(model(g.ids("in_idx")), g, dtype == DType::Float32 ? 1e-5 : 1e-6);
  }
  const Ids expected = g.ids("greedy");
  const Ids prompt = g.ids("prompt");
  const Ids got = greedy(model, prompt, expected.size(1) - prompt.size(1));
  CHECK(got.shape() == expected.shape());
  CHECK(std::vector<int64_t>(got.values().begin(), got.values().end()) ==
        std::vector<int64_t>(expected.values().begin(), expected.values().end()));
  // The output head is wte itself (tied).
  CHECK(model.out_head.weight.values() == model.tok_emb.weight.values());
}

TEST_CASE("load_gpt2_weights: \"transformer.\" names", "[gpt2]") {
  const File g(kGpt2Dir + "gpt2_tiny_goldens.safetensors");
  const std::string path = (scratch() / "prefixed.safetensors").string();
  rewrite(path, [](SafetensorsTensor& t, std::vector<uint8_t>&) {
    t.name = "transformer." + t.name;
    return true;
  });
  nn::GPTModel model(kGpt2Tiny, DType::Float64);
  nn::load_gpt2_weights(model, path);
  model.eval();
  Tape tape;
  TapeScope scope(tape);
  check_logits(model(g.ids("in_idx")), g);
  std::filesystem::remove(path);
}

TEST_CASE("load_gpt2_weights: bad files throw naming the tensor and leave the model unchanged",
          "[gpt2]") {
  const auto dir = scratch();
  manual_seed(9);
  nn::GPTModel model(kGpt2Tiny);
  const auto before = model.state_dict();
  std::vector<std::vector<double>> values;
  for (const auto& [name, p] : before) values.push_back(p.values());
  auto unchanged = [&] {
    const auto now = model.state_dict();
    REQUIRE(now.size() == before.size());
    for (size_t i = 0; i < now.size(); ++i) {
      INFO(now[i].first);
      CHECK(now[i].second.values() == values[i]);
    }
  };

  SECTION("a missing tensor") {
    const std::string path = (dir / "missing.safetensors").string();
    rewrite(path, [](SafetensorsTensor& t, std::vector<uint8_t>&) {
      return t.name != "h.1.mlp.c_fc.bias";
    });
    CHECK_THROWS_WITH(nn::load_gpt2_weights(model, path),
                      Catch::Contains(path) && Catch::Contains("\"h.1.mlp.c_fc.bias\" [96]") &&
                          Catch::Contains("missing"));
    unchanged();
  }
  SECTION("a shape that does not fit the config") {
    const std::string path = (dir / "shape.safetensors").string();
    rewrite(path, [](SafetensorsTensor& t, std::vector<uint8_t>& b) {
      if (t.name == "ln_f.weight") {
        t.shape = {23};
        b.resize(23 * 4);
      }
      return true;
    });
    CHECK_THROWS_WITH(nn::load_gpt2_weights(model, path), Catch::Contains("ln_f.weight") &&
                                                              Catch::Contains("[23]") &&
                                                              Catch::Contains("needs [24]"));
    unchanged();
  }
  SECTION("a model of another config") {
    nn::GPTModel wider(nn::GPTConfig{97, 16, 30, 3, 2, 0.0, true});
    CHECK_THROWS_WITH(nn::load_gpt2_weights(wider, kWeights), Catch::Contains("wte.weight") &&
                                                                  Catch::Contains("[97, 24]") &&
                                                                  Catch::Contains("[97, 30]"));
    nn::GPTModel one_layer(nn::GPTConfig{97, 16, 24, 3, 1, 0.0, true});
    CHECK_THROWS_WITH(nn::load_gpt2_weights(one_layer, kWeights),
                      Catch::Contains("unexpected") && Catch::Contains("h.1.ln_1.weight"));
  }
  SECTION("a truncated file") {
    const std::string path = (dir / "truncated.safetensors").string();
    std::filesystem::copy_file(kWeights, path);
    std::filesystem::resize_file(path, std::filesystem::file_size(path) - 100);
    CHECK_THROWS_WITH(nn::load_gpt2_weights(model, path),
                      Catch::Contains("not a safetensors file") && Catch::Contains(path));
    unchanged();
  }
  SECTION("a file that is not safetensors") {
    const std::string path = (dir / "text.safetensors").string();
    std::ofstream(path) << "this is not a checkpoint\n";
    CHECK_THROWS_WITH(nn::load_gpt2_weights(model, path),
                      Catch::Contains("not a safetensors file") && Catch::Contains(path));
    CHECK_THROWS_WITH(nn::load_gpt2_weights(model, (dir / "absent.safetensors").string()),
                      Catch::Contains("absent.safetensors"));
    unchanged();
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("load_gpt2_weights: F16 and BF16 files load, each element converted once", "[gpt2]") {
  const auto dir = scratch();
  for (const std::string dtype : {"F16", "BF16"}) {
    const std::string path = (dir / (dtype + ".safetensors")).string();
    // Every F32 entry as 16-bit: BF16 keeps the top half of the float's bits; F16 gets values
    // exactly representable in it (multiples of 1/1024 in [-2, 2)), so the expected floats are
    // known exactly.
    std::map<std::string, std::vector<float>> expected;
    rewrite(path, [&](SafetensorsTensor& t, std::vector<uint8_t>& b) {
      if (t.dtype != "F32") return true;
      const size_t n = b.size() / 4;
      std::vector<uint8_t> out(2 * n);
      std::vector<float>& want = expected[t.name];
      for (size_t i = 0; i < n; ++i) {
        float v;
        std::memcpy(&v, b.data() + 4 * i, 4);
        uint16_t h;
        if (dtype == "BF16") {
          h = static_cast<uint16_t>(std::bit_cast<uint32_t>(v) >> 16);
          want.push_back(std::bit_cast<float>(static_cast<uint32_t>(h) << 16));
        } else {
          const int k = static_cast<int>(std::lround(std::clamp(v, -2.0f, 1.99f) * 1024));
          const float q = static_cast<float>(k) / 1024.0f;  // |q| < 2: a normal or zero half
          const uint32_t bits = std::bit_cast<uint32_t>(q);
          h = q == 0.0f ? 0
                        : static_cast<uint16_t>(((bits >> 16) & 0x8000u) |
                                                ((((bits >> 23) & 0xffu) - 112) << 10) |
                                                ((bits >> 13) & 0x3ffu));
          want.push_back(q);
        }
        std::memcpy(out.data() + 2 * i, &h, 2);
      }
      t.dtype = dtype;
      b = std::move(out);
      return true;
    });
    nn::GPTModel model(kGpt2Tiny);
    nn::load_gpt2_weights(model, path);
    const auto params = model.named_parameters();
    auto values_of = [&](const std::string& name) {
      for (const auto& [n, p] : params) {
        if (n == name) return p.values();
      }
      FAIL("no parameter " << name);
      return std::vector<double>{};
    };
    INFO(dtype);
    const std::vector<float>& wte = expected.at("wte.weight");
    CHECK(values_of("tok_emb.weight") == std::vector<double>(wte.begin(), wte.end()));
    CHECK(values_of("out_head.weight") == std::vector<double>(wte.begin(), wte.end()));
    const std::vector<float>& bias = expected.at("h.1.attn.c_attn.bias");  // q | k | v
    CHECK(values_of("trf_blocks.1.att.W_value.bias") ==
          std::vector<double>(bias.begin() + 2 * 24, bias.end()));
    const std::vector<float>& fc = expected.at("h.0.mlp.c_fc.weight");           // [24, 96], Conv1D
    const std::vector<double> w = values_of("trf_blocks.0.ff.layers.0.weight");  // [96, 24]
    REQUIRE(w.size() == fc.size());
    bool transposed = true;
    for (int64_t o = 0; o < 96; ++o) {
      for (int64_t i = 0; i < 24; ++i) transposed = transposed && w[o * 24 + i] == fc[i * 96 + o];
    }
    CHECK(transposed);
  }
  std::filesystem::remove_all(dir);
}
