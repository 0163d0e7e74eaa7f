// Tests for nn/hf_weights.cpp: Qwen3 and Llama 3 checkpoints in Hugging Face's layout
// (tests/goldens/qwen3/make_hf_goldens.py writes them), their logits against the book's loader.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/io/safetensors.h>
#include <tapegrad/nn/hf_weights.h>
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
