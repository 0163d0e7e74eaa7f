// Tests for nn/hf_weights.cpp: Qwen3 and Llama 3 checkpoints in Hugging Face's layout
// (tests/goldens/qwen3/make_hf_goldens.py writes them), their logits against the book's loader, and
// loaded straight into bfloat16 weights against float32-then-convert.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/io/safetensors.h>
#include <tapegrad/nn/hf_weights.h>
#include <tapegrad/nn/layers.h>
#include "tests/goldens.h"
#include "tests/temp_dir.h"

using namespace tapegrad;

namespace test_hf_weights {

namespace fs = std::filesystem;

// make_qwen3_goldens.py's QWEN3_CONFIG_TINY and LLAMA3_CONFIG_TINY.
constexpr nn::Qwen3Config kQwenTiny{97, 16, 32, 4, 2, 48, 8, true, 2, 1000000.0};
constexpr nn::Llama3Config kLlamaTiny{97, 16, 64, 32,       4,
                                      2,  48, 2,  500000.0, {32.0, 1.0, 4.0, 8192}};

std::string hf_dir(const std::string& name) {
  return std::string(TAPEGRAD_GOLDEN_DIR) + "/qwen3/hf/" + name;
}

void check_logits(const Tensor& logits, const std::string& key) {
  const testing::GoldenFile golden("qwen3", "hf.txt");
  const std::vector<double> got = logits.values();
  const std::vector<double>& want = golden[key].values;
  REQUIRE(got.size() == want.size());
  double scale = 0.0;
  for (double v : want) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < got.size(); ++i) {
    INFO(key << " " << i << ": " << got[i] << " vs torch " << want[i]);
    REQUIRE(std::abs(got[i] - want[i]) <= 1e-5 * scale);
  }
}

Ids in_idx() {
  const testing::GoldenFile golden("qwen3", "hf.txt");
  return Ids(golden["in_idx"].shape, golden["in_idx"].ints());
}

// A copy of the tiny Qwen3 checkpoint's directory to damage.
fs::path copy_qwen(const testing::TempDir& dir) {
  const fs::path to = dir.path / "qwen3_tiny";
  fs::copy(hf_dir("qwen3_tiny"), to);
  return to;
}

void replace_in_file(const fs::path& file, const std::string& from, const std::string& to) {
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  std::ofstream(file, std::ios::trunc) << text;
}

}  // namespace test_hf_weights

TEST_CASE(
    "load_qwen3_weights: two shards (F32 and BF16) and an index, tied head, the book's logits",
    "[qwen3][hf_weights][goldens]") {
  using namespace test_hf_weights;
  manual_seed(5);
  nn::Qwen3Model model(kQwenTiny);
  nn::load_qwen3_weights(model, hf_dir("qwen3_tiny"));
  // Tied: the head holds the embedding's values (its own copy).
  CHECK(model.out_head.weight.values() == model.tok_emb.weight.values());
  CHECK(model.out_head.weight.get() != model.tok_emb.weight.get());
  model.eval();
  Tape tape;
  TapeScope scope(tape);
  NoGradGuard no_grad;
  check_logits(model(in_idx()), "qwen3.logits");
  // The index itself as the path gives the same weights.
  manual_seed(6);
  nn::Qwen3Model again(kQwenTiny);
  nn::load_qwen3_weights(again, hf_dir("qwen3_tiny") + "/model.safetensors.index.json");
  CHECK(again.trf_blocks[1].ff.fc2.weight.values() == model.trf_blocks[1].ff.fc2.weight.values());
}

TEST_CASE("load_llama3_weights: one BF16 file with lm_head, the book's logits, bf16 bits kept",
          "[llama3][hf_weights][goldens]") {
  using namespace test_hf_weights;
  manual_seed(5);
  nn::Llama3Model model(kLlamaTiny);
  const std::string file = hf_dir("llama3_tiny") + "/model.safetensors";
  nn::load_llama3_weights(model, file);
  CHECK(model.out_head.weight.values() != model.tok_emb.weight.values());
  model.eval();
  {
    Tape tape;
    TapeScope scope(tape);
    NoGradGuard no_grad;
    check_logits(model(in_idx()), "llama3.logits");
  }
  // bfloat16 weights after loading are the file's bits exactly.
  CHECK(nn::use_bf16_weights(model) == 2 * 7 + 1);
  const MappedFile mapped(file);
  const SafetensorsView view = parse_safetensors(mapped.bytes(), file);
  const SafetensorsEntry* e = view.find("model.layers.1.mlp.down_proj.weight");
  REQUIRE(e != nullptr);
  const auto bytes = view.bytes(*e);
  REQUIRE(model.trf_blocks[1].ff.fc3.has_bf16_weight());
  CHECK(std::memcmp(model.trf_blocks[1].ff.fc3.bf16_weight(), bytes.data(), bytes.size()) == 0);
}

TEST_CASE("load_qwen3_weights: bad checkpoints are Errors naming the file and tensor, model kept",
          "[qwen3][hf_weights]") {
  using namespace test_hf_weights;
  manual_seed(5);
  nn::Qwen3Model model(kQwenTiny);
  const std::vector<double> before = model.trf_blocks[0].att.W_query.weight.values();
  auto unchanged = [&] { CHECK(model.trf_blocks[0].att.W_query.weight.values() == before); };

  SECTION("no such path") {
    CHECK_THROWS_WITH(
        nn::load_qwen3_weights(model, "/nonexistent/qwen"),
        Catch::Contains("load_qwen3_weights") && Catch::Contains("/nonexistent/qwen"));
  }
  SECTION("a directory without a checkpoint") {
    testing::TempDir dir;
    CHECK_THROWS_WITH(nn::load_qwen3_weights(model, dir.path.string()),
                      Catch::Contains("neither model.safetensors"));
  }
  SECTION("a missing shard") {
    testing::TempDir dir;
    const fs::path copy = copy_qwen(dir);
    fs::remove(copy / "model-00002-of-00002.safetensors");
    CHECK_THROWS_WITH(nn::load_qwen3_weights(model, copy.string()),
                      Catch::Contains("model-00002-of-00002.safetensors is missing"));
  }
  SECTION("a tensor missing from the index") {
    testing::TempDir dir;
    const fs::path copy = copy_qwen(dir);
    replace_in_file(copy / "model.safetensors.index.json",
                    "\"model.layers.1.mlp.up_proj.weight\": \"model-00002-of-00002.safetensors\",",
                    "");
    CHECK_THROWS_WITH(nn::load_qwen3_weights(model, copy.string()),
                      Catch::Contains("\"model.layers.1.mlp.up_proj.weight\" [48, 32]") &&
                          Catch::Contains("trf_blocks.1.ff.fc2.weight") &&
                          Catch::Contains("missing"));
  }
  SECTION("an index that puts a tensor in the wrong shard") {
    testing::TempDir dir;
    const fs::path copy = copy_qwen(dir);
    replace_in_file(copy / "model.safetensors.index.json",
                    "\"model.norm.weight\": \"model-00002-of-00002.safetensors\"",
                    "\"model.norm.weight\": \"model-00001-of-00002.safetensors\"");
    CHECK_THROWS_WITH(
        nn::load_qwen3_weights(model, copy.string()),
        Catch::Contains("\"model.norm.weight\"") && Catch::Contains("does not hold it"));
  }
  SECTION("a damaged index") {
    testing::TempDir dir;
    const fs::path copy = copy_qwen(dir);
    replace_in_file(copy / "model.safetensors.index.json", "\"weight_map\": {",
                    "\"weight_map\": [");
    CHECK_THROWS_WITH(
        nn::load_qwen3_weights(model, copy.string()),
        Catch::Contains("model.safetensors.index.json") && Catch::Contains("expected"));
  }
  SECTION("a shape that does not fit the config") {
    nn::Qwen3Config wide = kQwenTiny;
    wide.hidden_dim = 40;
    manual_seed(5);
    nn::Qwen3Model other(wide);
    CHECK_THROWS_WITH(nn::load_qwen3_weights(other, hf_dir("qwen3_tiny")),
                      Catch::Contains("model-00001-of-00002.safetensors") &&
                          Catch::Contains("\"model.layers.0.mlp.gate_proj.weight\"") &&
                          Catch::Contains("[48, 32]") && Catch::Contains("[40, 32]"));
  }
  SECTION("more blocks in the file than in the config") {
    nn::Qwen3Config shallow = kQwenTiny;
    shallow.n_layers = 1;
    manual_seed(5);
    nn::Qwen3Model other(shallow);
    CHECK_THROWS_WITH(nn::load_qwen3_weights(other, hf_dir("qwen3_tiny")),
                      Catch::Contains("no place for") && Catch::Contains("model.layers.1."));
  }
  SECTION("a Llama file into a Qwen3 model") {
    CHECK_THROWS_WITH(nn::load_qwen3_weights(model, hf_dir("llama3_tiny")),
                      Catch::Contains("q_norm") && Catch::Contains("missing"));
  }
  SECTION("not a safetensors file") {
    testing::TempDir dir;
    std::ofstream(dir.file("model.safetensors")) << "not a checkpoint";
    CHECK_THROWS_WITH(nn::load_qwen3_weights(model, dir.path.string()),
                      Catch::Contains("not a safetensors file"));
  }
  unchanged();
}

TEST_CASE("qwen3_config and llama3_config: the book's configs by Hugging Face's names",
          "[qwen3][llama3][hf_weights]") {
  CHECK(nn::qwen3_config("qwen3-0.6b").emb_dim == 1024);
  CHECK(nn::qwen3_config("Qwen/Qwen3-0.6B-Base").n_layers == 28);
  CHECK(nn::qwen3_config("Qwen3-32B").n_heads == 64);
  CHECK(nn::Qwen3Model::count_parameters(nn::qwen3_config("qwen3-1.7b")) == 2031739904);
  CHECK(nn::llama3_config("llama3.2-1b").emb_dim == 2048);
  CHECK(nn::llama3_config("meta-llama/Llama-3.2-3B-Instruct").emb_dim == 3072);
  CHECK_THROWS_WITH(nn::qwen3_config("qwen2-7b"),
                    Catch::Contains("qwen2-7b") && Catch::Contains("qwen3-0.6b"));
  CHECK_THROWS_WITH(nn::llama3_config("llama3-8b"), Catch::Contains("llama3.2-1b"));
}

namespace test_hf_weights {

// Every Linear's bfloat16 bits, in module order.
std::vector<std::vector<uint16_t>> bf16_bits(nn::Module& model) {
  std::vector<std::vector<uint16_t>> out;
  for (nn::Module* m : model.modules()) {
    const auto* linear = dynamic_cast<const nn::Linear*>(m);
    if (linear == nullptr) continue;
    REQUIRE(linear->has_bf16_weight());
    const uint16_t* bits = linear->bf16_weight();
    out.emplace_back(bits, bits + linear->weight.numel());
  }
  return out;
}

template <class Model>
std::vector<double> logits_of(const Model& model) {
  Tape tape;
  TapeScope scope(tape);
  NoGradGuard no_grad;
  return model(in_idx()).values();
}

}  // namespace test_hf_weights

TEST_CASE(
    "load_qwen3_model_bf16 / load_llama3_model_bf16: float32-then-convert's model bit for bit",
    "[qwen3][llama3][hf_weights][bf16]") {
  using namespace test_hf_weights;
  // Qwen3: one F32 shard (rounded to nearest even) and one BF16 shard (bits copied), tied head.
  manual_seed(5);
  nn::Qwen3Model reference(kQwenTiny);
  nn::load_qwen3_weights(reference, hf_dir("qwen3_tiny"));
  CHECK(nn::use_bf16_weights(reference) == 2 * 7 + 1);
  reference.eval();
  const std::unique_ptr<nn::Qwen3Model> qwen =
      nn::load_qwen3_model_bf16(kQwenTiny, hf_dir("qwen3_tiny"));
  qwen->eval();
  CHECK(!qwen->out_head.weight.has_values());  // never held float32 values
  CHECK(bf16_bits(*qwen) == bf16_bits(reference));
  CHECK(qwen->tok_emb.weight.values() == reference.tok_emb.weight.values());
  CHECK(qwen->final_norm.scale.values() == reference.final_norm.scale.values());
  CHECK(logits_of(*qwen) == logits_of(reference));

  // Llama 3.2: one BF16 file with its own lm_head.
  manual_seed(5);
  nn::Llama3Model llama_reference(kLlamaTiny);
  nn::load_llama3_weights(llama_reference, hf_dir("llama3_tiny"));
  nn::use_bf16_weights(llama_reference);
  llama_reference.eval();
  const auto llama = nn::load_llama3_model_bf16(kLlamaTiny, hf_dir("llama3_tiny"));
  llama->eval();
  CHECK(bf16_bits(*llama) == bf16_bits(llama_reference));
  CHECK(logits_of(*llama) == logits_of(llama_reference));

  // Bad input: the loader's Errors, under this function's name.
  CHECK_THROWS_WITH(
      nn::load_qwen3_model_bf16(kQwenTiny, "/nonexistent/qwen"),
      Catch::Contains("load_qwen3_model_bf16") && Catch::Contains("/nonexistent/qwen"));
  CHECK_THROWS_WITH(nn::load_qwen3_model_bf16(kQwenTiny, hf_dir("llama3_tiny")),
                    Catch::Contains("q_norm") && Catch::Contains("missing"));
}

namespace test_hf_weights {

// Llama-3.2-1B's config.json (Hugging Face's fields), with `edit` applied to the text.
std::string llama_1b_json() {
  return R"({"architectures": ["LlamaForCausalLM"], "head_dim": 64, "hidden_size": 2048,
  "intermediate_size": 8192, "max_position_embeddings": 131072, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0,
  "low_freq_factor": 1.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "rope_theta": 500000.0, "tie_word_embeddings": true, "vocab_size": 128256})";
}

bool same_config(const nn::Llama3Config& a, const nn::Llama3Config& b) {
  return a.vocab_size == b.vocab_size && a.context_length == b.context_length &&
         a.orig_context_length == b.orig_context_length && a.emb_dim == b.emb_dim &&
         a.n_heads == b.n_heads && a.n_layers == b.n_layers && a.hidden_dim == b.hidden_dim &&
         a.n_kv_groups == b.n_kv_groups && a.rope_base == b.rope_base &&
         a.rope_freq.factor == b.rope_freq.factor &&
         a.rope_freq.low_freq_factor == b.rope_freq.low_freq_factor &&
         a.rope_freq.high_freq_factor == b.rope_freq.high_freq_factor &&
         a.rope_freq.original_context_length == b.rope_freq.original_context_length;
}

}  // namespace test_hf_weights

TEST_CASE("llama3_config_from_json: Hugging Face's config.json as the book's Llama3Config",
          "[llama3][hf_weights]") {
  using namespace test_hf_weights;
  testing::TempDir dir;
  const fs::path file = dir.file("config.json");
  std::ofstream(file) << llama_1b_json();
  // Llama 3.2 1B's file gives the book's LLAMA32_CONFIG_1B (context 8192, theta rescaled).
  CHECK(same_config(nn::llama3_config_from_json(dir.path.string()), nn::LLAMA32_CONFIG_1B));
  CHECK(nn::llama3_config_from_json(file.string(), 1024).context_length == 1024);

  // The tiny checkpoint's sizes: its config read back gives the book's logits.
  std::string tiny = llama_1b_json();
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"\"head_dim\": 64", "\"head_dim\": 8"},
           {"\"hidden_size\": 2048", "\"hidden_size\": 32"},
           {"\"intermediate_size\": 8192", "\"intermediate_size\": 48"},
           {"\"max_position_embeddings\": 131072", "\"max_position_embeddings\": 64"},
           {"\"num_attention_heads\": 32", "\"num_attention_heads\": 4"},
           {"\"num_hidden_layers\": 16", "\"num_hidden_layers\": 2"},
           {"\"num_key_value_heads\": 8", "\"num_key_value_heads\": 2"},
           {"\"vocab_size\": 128256", "\"vocab_size\": 97"}}) {
    tiny.replace(tiny.find(from), from.size(), to);
  }
  std::ofstream(file, std::ios::trunc) << tiny;
  const nn::Llama3Config cfg = nn::llama3_config_from_json(dir.path.string(), 16);
  CHECK(same_config(cfg, kLlamaTiny));
  manual_seed(5);
  nn::Llama3Model model(cfg);
  nn::load_llama3_weights(model, hf_dir("llama3_tiny"));
  model.eval();
  {
    Tape tape;
    TapeScope scope(tape);
    NoGradGuard no_grad;
    check_logits(model(in_idx()), "llama3.logits");
  }

  // Bad files: Errors naming the function, the file and the field.
  auto expect = [&](const std::string& from, const std::string& to, const std::string& part) {
    std::string text = llama_1b_json();
    text.replace(text.find(from), from.size(), to);
    std::ofstream(file, std::ios::trunc) << text;
    CHECK_THROWS_WITH(nn::llama3_config_from_json(dir.path.string()),
                      Catch::Contains("llama3_config_from_json") &&
                          Catch::Contains(file.string()) && Catch::Contains(part));
  };
  expect("\"hidden_size\": 2048,", "", "no \"hidden_size\"");
  expect("\"num_attention_heads\": 32", "\"num_attention_heads\": \"32\"",
         "\"num_attention_heads\" is \"32\", not a number");
  expect("\"head_dim\": 64", "\"head_dim\": 128", "\"head_dim\" 128");
  expect("\"rope_type\": \"llama3\"", "\"rope_type\": \"default\"", "rope_scaling.rope_type");
  expect("\"factor\": 32.0,", "", "no \"rope_scaling.factor\"");
  expect("\"num_key_value_heads\": 8", "\"num_key_value_heads\": 5", "n_kv_groups");
  CHECK_THROWS_WITH(
      nn::llama3_config_from_json("/nonexistent/llama"),
      Catch::Contains("llama3_config_from_json") && Catch::Contains("/nonexistent/llama"));
}
