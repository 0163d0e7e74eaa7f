// GPT-2's tokenizer against the book's ids and against ids of two reference implementations.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/text/tokenizer.h>
#include "tests/goldens.h"

using namespace tapegrad;

namespace {

// The tokenizer from the fetched cache (tools/fetch_gpt2_vocab.sh; $TAPEGRAD_GPT2_DIR overrides
// it). Without the files a local run warns and skips; under CI (CI=true) dev.sh fetched them, so
// their absence fails the test.
std::optional<GPT2Tokenizer> gpt2_or_skip() {
  const std::filesystem::path dir = default_gpt2_vocab_dir();
  if (std::filesystem::exists(dir / "encoder.json") && std::filesystem::exists(dir / "vocab.bpe")) {
    return GPT2Tokenizer::from_dir(dir);
  }
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") {
    FAIL("GPT-2's vocabulary is missing from " << dir << ": run bash tools/fetch_gpt2_vocab.sh");
  }
  WARN("skipped: no GPT-2 vocabulary in " << dir << " (bash tools/fetch_gpt2_vocab.sh)");
  return std::nullopt;
}

struct Golden {
  std::string text;
  std::vector<int64_t> ids;
};

// tests/goldens/text/tokenizer_goldens.txt, made by make_tokenizer_goldens.py beside it: each text
// as `<name>:text` (its bytes) and its ids as `<name>:ids`, read through tests/goldens.h.
std::map<std::string, Golden> tokenizer_goldens() {
  const auto& file = testing::golden_file("text/tokenizer_goldens.txt");
  const std::string suffix = ":text";
  std::map<std::string, Golden> goldens;
  for (const std::string& record : file.names()) {
    if (record.size() <= suffix.size() || !record.ends_with(suffix)) continue;
    const std::string name = record.substr(0, record.size() - suffix.size());
    goldens[name] = {file[record].text, file[name + ":ids"].ints()};
  }
  return goldens;
}

}  // namespace

TEST_CASE("GPT-2 tokenizer: the book's strings", "[text][tokenizer]") {
  auto tok = gpt2_or_skip();
  if (!tok) return;
  // Chapter 4/5's prompts, as the book prints their ids (tiktoken.get_encoding("gpt2")).
  CHECK(tok->encode("Hello, I am") == std::vector<int64_t>{15496, 11, 314, 716});
  CHECK(tok->encode("Every effort moves you") == std::vector<int64_t>{6109, 3626, 6100, 345});
  // Chapter 2's round trip with <|endoftext|> allowed.
  const std::string text =
      "Hello, do you like tea? <|endoftext|> In the sunlit terraces of someunknownPlace.";
  const std::vector<int64_t> ids = tok->encode(text);
  CHECK(ids == std::vector<int64_t>{15496, 11,   466,   345,  588,  8887, 30,  220,   50256, 554,
                                    262,   4252, 18250, 8812, 2114, 286,  617, 34680, 27271, 13});
  CHECK(tok->decode(ids) == text);
  CHECK(tok->n_vocab() == 50257);
  CHECK(tok->eot_token() == 50256);
  // encode_ordinary treats the special token as text: "<", "|", "end", "of", "text", "|>".
  const std::vector<int64_t> ordinary = tok->encode_ordinary("<|endoftext|>");
  CHECK(ordinary.size() > 1);
  CHECK(std::find(ordinary.begin(), ordinary.end(), 50256) == ordinary.end());
  CHECK(tok->decode(ordinary) == "<|endoftext|>");
}

TEST_CASE("GPT-2 tokenizer: varied text equals the reference ids", "[text][tokenizer]") {
  auto tok = gpt2_or_skip();
  if (!tok) return;
  const auto goldens = tokenizer_goldens();
  REQUIRE(goldens.size() >= 15);
  size_t characters = 0;
  for (const auto& [name, golden] : goldens) {
    INFO(name);
    CHECK(tok->encode(golden.text) == golden.ids);
    CHECK(tok->decode(golden.ids) == golden.text);
    characters += golden.text.size();
  }
  CHECK(characters > 4000);
}

TEST_CASE("GPT-2 tokenizer: long runs, empty text, bad input", "[text][tokenizer]") {
  auto tok = gpt2_or_skip();
  if (!tok) return;
  CHECK(tok->encode("").empty());
  // Long runs stay within PCRE2's limits and round-trip.
  for (const std::string& run : {std::string(200000, ' '), std::string(200000, 'a'),
                                 std::string(100000, '\n') + "x", std::string(50000, '7')}) {
    CHECK(tok->decode(tok->encode(run)) == run);
  }
  CHECK_THROWS_WITH(tok->encode("ok \xff\xfe bytes"),
                    Catch::Contains("not valid UTF-8") && Catch::Contains("at byte 3"));
  CHECK_THROWS_WITH(tok->decode(std::vector<int64_t>{1, 50257}), Catch::Contains("id 50257"));
  CHECK_THROWS_WITH(tok->decode(std::vector<int64_t>{-1}), Catch::Contains("id -1"));
}

TEST_CASE("GPT-2 tokenizer: files that are not GPT-2's", "[text][tokenizer]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "tapegrad_tokenizer_test";
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return dir / name;
  };
  CHECK_THROWS_WITH(GPT2Tokenizer::from_dir(dir / "nowhere"),
                    Catch::Contains("cannot open") && Catch::Contains("encoder.json"));
  const auto encoder = write("encoder.json", "{\"a\": 0, \"<|endoftext|>\": 1}");
  const auto not_json = write("broken.json", "{\"a\": ");
  const auto merges = write("vocab.bpe", "#version: 0.2\nĠ t\n");
  const auto no_version = write("plain.txt", "hello world\n");
  CHECK_THROWS_WITH(GPT2Tokenizer::from_files(not_json, merges),
                    Catch::Contains("broken.json") && Catch::Contains("not JSON"));
  CHECK_THROWS_WITH(GPT2Tokenizer::from_files(encoder, no_version),
                    Catch::Contains("plain.txt") && Catch::Contains("#version"));
  CHECK_THROWS_WITH(GPT2Tokenizer::from_files(encoder, merges),
                    Catch::Contains("vocab.bpe") && Catch::Contains("1 merges"));
  CHECK_THROWS_WITH(GPT2Tokenizer::from_tokenizer_json(encoder), Catch::Contains("no BPE model"));
  CHECK_THROWS_WITH(make_tokenizer("words"), Catch::Contains("'words'"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("GPT-2 tokenizer: Hugging Face's tokenizer.json gives the same ids",
          "[text][tokenizer]") {
  auto tok = gpt2_or_skip();
  if (!tok) return;
  // No tokenizer.json can be downloaded here: build one in its layout (vocab, merges as "a b",
  // <|endoftext|> as an added token) from the same two files.
  const std::filesystem::path src = default_gpt2_vocab_dir();
  std::ifstream vocab_in(src / "encoder.json"), merges_in(src / "vocab.bpe");
  std::stringstream vocab;
  vocab << vocab_in.rdbuf();
  std::string json =
      "{\"version\": \"1.0\", \"added_tokens\": [{\"id\": 50256, \"content\": "
      "\"<|endoftext|>\", \"special\": true}], \"pre_tokenizer\": {\"type\": "
      "\"ByteLevel\"}, \"model\": {\"type\": \"BPE\", \"vocab\": " +
      vocab.str() + ", \"merges\": [";
  std::string line;
  std::getline(merges_in, line);  // #version
  bool first = true;
  while (std::getline(merges_in, line)) {
    if (line.empty()) continue;
    std::string escaped;
    for (char c : line) {
      if (c == '"' || c == '\\') escaped.push_back('\\');
      escaped.push_back(c);
    }
    json += (first ? "\"" : ", \"") + escaped + "\"";
    first = false;
  }
  json += "]}}";
  const auto path = std::filesystem::temp_directory_path() / "tapegrad_test_tokenizer.json";
  std::ofstream(path, std::ios::binary) << json;
  const GPT2Tokenizer hf = GPT2Tokenizer::from_tokenizer_json(path);
  std::filesystem::remove(path);
  for (const auto& [name, golden] : tokenizer_goldens()) {
    INFO(name);
    CHECK(hf.encode(golden.text) == golden.ids);
  }
}

TEST_CASE("Byte tokenizer: 256 ids, any bytes round-trip", "[text][tokenizer]") {
  ByteTokenizer tok;
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  const std::vector<int64_t> ids = tok.encode(all);
  REQUIRE(ids.size() == 256);
  for (int b = 0; b < 256; ++b) CHECK(ids[static_cast<size_t>(b)] == b);
  CHECK(tok.decode(ids) == all);
  CHECK(tok.encode("<|endoftext|>").size() == 13);  // no special token: its 13 bytes
  CHECK(tok.n_vocab() == 256);
  CHECK_FALSE(tok.eot_token().has_value());
  CHECK_THROWS_WITH(tok.decode(std::vector<int64_t>{256}), Catch::Contains("id 256"));
  CHECK(make_tokenizer("bytes")->name() == "bytes");
}
