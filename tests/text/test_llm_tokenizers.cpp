// Qwen3's and Llama 3's tokenizers against ids of Hugging Face's tokenizers and tiktoken.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/text/llm_tokenizers.h>
#include "tests/goldens.h"

using namespace tapegrad;

namespace llm_tokenizers_test {

// A tokenizer from the fetched cache (tools/fetch_tokenizers.sh). Without the file a local run
// warns and skips; under CI (CI=true) dev.sh fetched it, so its absence fails the test.
template <class T>
const T* load_or_skip(const char* model) {
  static const std::optional<T> tokenizer = [&]() -> std::optional<T> {
    const std::filesystem::path file = default_tokenizer_file(model);
    if (std::filesystem::exists(file)) return T::from_file(file);
    return std::nullopt;
  }();
  if (tokenizer) return &*tokenizer;
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") {
    FAIL(model << "'s tokenizer is missing from " << default_tokenizer_file(model)
               << ": run bash tools/fetch_tokenizers.sh");
  }
  WARN("skipped: no " << model << " tokenizer (bash tools/fetch_tokenizers.sh)");
  return nullptr;
}

// tests/goldens/text/llm_tokenizer_goldens.txt (make_llm_tokenizer_goldens.py beside it): each
// text as `<name>:text`, its ids in each mode as `<name>:<mode>`.
struct Golden {
  std::string text;
  std::map<std::string, std::vector<int64_t>> ids;  // mode -> ids
};

std::map<std::string, Golden> goldens() {
  const auto& file = testing::golden_file("text/llm_tokenizer_goldens.txt");
  std::map<std::string, Golden> out;
  for (const std::string& record : file.names()) {
    const size_t colon = record.find(':');
    const std::string name = record.substr(0, colon), mode = record.substr(colon + 1);
    if (mode == "text") {
      out[name].text = file[record].text;
    } else {
      out[name].ids[mode] = file[record].ints();
    }
  }
  return out;
}

}  // namespace llm_tokenizers_test

TEST_CASE("Qwen3 tokenizer: the book's encode and Hugging Face's ids", "[text][tokenizer]") {
  const Qwen3Tokenizer* tok = llm_tokenizers_test::load_or_skip<Qwen3Tokenizer>("qwen3");
  if (!tok) return;
  const auto all = llm_tokenizers_test::goldens();
  REQUIRE(all.size() >= 20);
  for (const auto& [name, golden] : all) {
    INFO(name);
    CHECK(tok->encode(golden.text) == golden.ids.at("qwen3"));
    CHECK(tok->encode_hf(golden.text) == golden.ids.at("qwen3_hf"));
    CHECK(tok->encode_chat(golden.text, {}) == golden.ids.at("qwen3_chat"));
    CHECK(tok->encode_chat(golden.text, {.add_thinking = true}) ==
          golden.ids.at("qwen3_chat_thinking"));
    if (name != "nfc") CHECK(tok->decode(golden.ids.at("qwen3_hf")) == golden.text);
  }
  CHECK(tok->n_vocab() == 151669);
  CHECK(tok->eot_token() == 151643);
  CHECK(tok->eos_token_id(/*base_model=*/false) == tok->token_id("<|im_end|>"));
  CHECK(tok->decode(std::vector<int64_t>{tok->token_id("<think>")}) == "<think>");
  CHECK(tok->encode("").empty());
  CHECK_THROWS_WITH(tok->encode("ok \xff\xfe bytes"),
                    Catch::Contains("Qwen3Tokenizer") && Catch::Contains("not valid UTF-8"));
  CHECK_THROWS_WITH(tok->decode(std::vector<int64_t>{151669}), Catch::Contains("id 151669"));
  CHECK_THROWS_WITH(tok->token_id("<|nothing|>"), Catch::Contains("<|nothing|>"));
}

TEST_CASE("Llama 3 tokenizer: the book's encode and ChatFormat against tiktoken's ids",
          "[text][tokenizer]") {
  const Llama3Tokenizer* tok = llm_tokenizers_test::load_or_skip<Llama3Tokenizer>("llama3");
  if (!tok) return;
  for (const auto& [name, golden] : llm_tokenizers_test::goldens()) {
    INFO(name);
    CHECK(tok->encode(golden.text) == golden.ids.at("llama3"));
    CHECK(tok->encode_chat(golden.text) == golden.ids.at("llama3_chat"));
    CHECK(tok->decode(golden.ids.at("llama3")) == golden.text);
  }
  // Special tokens' text becomes their ids only when allowed, with the book's names.
  const std::string text = "<|begin_of_text|>hi<|reserved_3|><|eot_id|>";
  CHECK(tok->encode(text, {.allow_special = true}) ==
        std::vector<int64_t>{128000, tok->encode("hi")[0], 128005, 128009});
  CHECK(tok->encode("hi", {.bos = true, .eos = true}) ==
        std::vector<int64_t>{128000, tok->encode("hi")[0], 128001});
  CHECK(tok->decode(std::vector<int64_t>{128006, 128255}) == "<|start_header_id|><|reserved_253|>");
  CHECK_THROWS_WITH(tok->decode(std::vector<int64_t>{-2}), Catch::Contains("id -2"));
  CHECK_THROWS_WITH(tok->encode("\xc3"), Catch::Contains("Llama3Tokenizer"));
}

TEST_CASE("Llama 3 tokenizer: Meta's tiktoken file gives the same ids", "[text][tokenizer]") {
  const Llama3Tokenizer* tok = llm_tokenizers_test::load_or_skip<Llama3Tokenizer>("llama3");
  if (!tok) return;
  // No tokenizer.model can be downloaded here: write one in tiktoken's format (a base64 token and
  // its rank a line) from the loaded ranks.
  auto base64 = [](const std::string& bytes) {
    static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (size_t i = 0; i < bytes.size(); i += 3) {
      uint32_t word = static_cast<unsigned char>(bytes[i]) << 16;
      if (i + 1 < bytes.size()) word |= static_cast<unsigned char>(bytes[i + 1]) << 8;
      if (i + 2 < bytes.size()) word |= static_cast<unsigned char>(bytes[i + 2]);
      for (size_t k = 0; k < 4; ++k) {
        out += k <= bytes.size() - i ? digits[(word >> (18 - 6 * k)) & 63] : '=';
      }
    }
    return out;
  };
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / "tapegrad_llama3_tokenizer.model";
  {
    std::ofstream out(file, std::ios::binary);
    for (int64_t id = 0; id < 128000; ++id) {
      out << base64(tok->decode(std::vector<int64_t>{id})) << ' ' << id << '\n';
    }
  }
  const Llama3Tokenizer from_model = Llama3Tokenizer::from_file(file);
  for (const auto& [name, golden] : llm_tokenizers_test::goldens()) {
    INFO(name);
    CHECK(from_model.encode(golden.text) == golden.ids.at("llama3"));
  }
  std::filesystem::remove(file);
}

TEST_CASE("Qwen3 and Llama 3 tokenizers: another model's file is an Error naming it",
          "[text][tokenizer]") {
  const std::filesystem::path qwen3 = default_tokenizer_file("qwen3");
  const std::filesystem::path llama3 = default_tokenizer_file("llama3");
  CHECK_THROWS_WITH(Qwen3Tokenizer::from_file("/nowhere/tokenizer.json"),
                    Catch::Contains("cannot open") && Catch::Contains("/nowhere/tokenizer.json"));
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "tapegrad_llm_tok";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "ranks.model") << "YQ== 0\nYg== 1\n";
  CHECK_THROWS_WITH(Llama3Tokenizer::from_file(dir / "ranks.model"),
                    Catch::Contains("ranks.model") && Catch::Contains("2 ranks"));
  std::ofstream(dir / "bad.model") << "!!! 0\n";
  CHECK_THROWS_WITH(Llama3Tokenizer::from_file(dir / "bad.model"), Catch::Contains("line 1"));
  std::filesystem::remove_all(dir);
  if (!std::filesystem::exists(qwen3) || !std::filesystem::exists(llama3)) return;
  CHECK_THROWS_WITH(Qwen3Tokenizer::from_file(llama3),
                    Catch::Contains("not Qwen3's") && Catch::Contains(llama3.string()));
  CHECK_THROWS_WITH(Llama3Tokenizer::from_file(qwen3),
                    Catch::Contains("not Llama 3's") && Catch::Contains("151643 ranks"));
}
