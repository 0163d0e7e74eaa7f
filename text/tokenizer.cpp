// GPT-2's byte-level BPE tokenizer (text/byte_level_bpe.h with tiktoken's rule) and the bytes one.
#include <tapegrad/text/tokenizer.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>
#include <utility>

#include <tapegrad/graph/error.h>
#include <tapegrad/text/byte_level_bpe.h>
#include <tapegrad/text/tokenizer_files.h>

namespace tapegrad {

namespace {

using json = nlohmann::json;

// GPT-2's pre-tokenizing pattern in tiktoken's equivalent, faster form.
constexpr std::string_view kGpt2Pattern =
    R"('(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

constexpr std::string_view kEndOfTextText = "<|endoftext|>";

std::string read_file(const std::filesystem::path& path, const char* what) {
  return detail::read_tokenizer_file(path, "GPT2Tokenizer", what,
                                     "bash tools/fetch_gpt2_vocab.sh fetches GPT-2's files");
}

json parse_json(const std::string& text, const std::filesystem::path& path) {
  return detail::parse_tokenizer_json(text, path, "GPT2Tokenizer");
}

[[noreturn]] void not_gpt2(const std::filesystem::path& path, const std::string& why) {
  throw Error("GPT2Tokenizer: '" + path.string() + "' is not GPT-2's vocabulary: " + why);
}

}  // namespace

struct GPT2Tokenizer::Impl {
  std::unique_ptr<const detail::BytePairEncoder> bpe;  // the 50256 mergeable tokens

  // Builds the ranks as tiktoken's data_gym_to_mergeable_bpe_ranks does: the 256 single bytes in
  // bytes_to_unicode order, then one id per merge in file order; they must equal `vocab`.
  static std::shared_ptr<const Impl> build(
      const std::vector<std::pair<std::string, std::string>>& merges, const json& vocab,
      const std::filesystem::path& vocab_path, const std::filesystem::path& merges_path);
};

std::shared_ptr<const GPT2Tokenizer::Impl> GPT2Tokenizer::Impl::build(
    const std::vector<std::pair<std::string, std::string>>& merges, const json& vocab,
    const std::filesystem::path& vocab_path, const std::filesystem::path& merges_path) {
  if (merges.size() + 256 != static_cast<size_t>(kEndOfText)) {
    not_gpt2(merges_path, std::to_string(merges.size()) + " merges, GPT-2 has 50000");
  }
  std::vector<std::string> tokens;
  tokens.reserve(static_cast<size_t>(kEndOfText));
  std::unordered_map<std::string, int64_t> seen;
  auto add = [&](std::string bytes) {
    if (!seen.emplace(bytes, static_cast<int64_t>(tokens.size())).second) {
      not_gpt2(merges_path, "token " + std::to_string(tokens.size()) + " repeats an earlier token");
    }
    tokens.push_back(std::move(bytes));
  };
  // bytes_to_unicode order: the printable bytes as themselves, then the others from U+0100 on.
  for (int cp = 0; cp < 324; ++cp) {
    const std::string text = cp < 128 ? std::string(1, static_cast<char>(cp))
                                      : std::string{static_cast<char>(0xC0 | (cp >> 6)),
                                                    static_cast<char>(0x80 | (cp & 0x3F))};
    if (auto bytes = detail::byte_level_bytes(text)) add(*bytes);
  }
  for (size_t i = 0; i < merges.size(); ++i) {
    auto first = detail::byte_level_bytes(merges[i].first);
    auto second = detail::byte_level_bytes(merges[i].second);
    if (!first || !second) {
      not_gpt2(merges_path, "merge " + std::to_string(i + 1) + " ('" + merges[i].first + " " +
                                merges[i].second + "') is not byte-level text");
    }
    add(*first + *second);
  }

  // tiktoken's check: the ranks are the ids of the vocabulary, which has "<|endoftext|>" besides.
  if (!vocab.is_object() || vocab.size() != static_cast<size_t>(kVocabSize)) {
    not_gpt2(vocab_path, "the vocabulary is not an object of 50257 tokens");
  }
  for (const auto& [token, id] : vocab.items()) {
    if (!id.is_number_integer())
      not_gpt2(vocab_path, "the id of '" + token + "' is not an integer");
    const int64_t value = id.get<int64_t>();
    if (token == kEndOfTextText) {
      if (value != kEndOfText) not_gpt2(vocab_path, "<|endoftext|> is not 50256");
      continue;
    }
    auto bytes = detail::byte_level_bytes(token);
    auto it = bytes ? seen.find(*bytes) : seen.end();
    if (it == seen.end() || it->second != value) {
      not_gpt2(vocab_path, "token '" + token + "' (id " + std::to_string(value) +
                               ") does not match the merges of '" + merges_path.string() + "'");
    }
  }
  auto impl = std::make_shared<Impl>();
  impl->bpe = std::make_unique<detail::BytePairEncoder>(
      "GPT2Tokenizer", std::move(tokens), std::vector<std::pair<int32_t, int32_t>>{}, kGpt2Pattern,
      detail::BytePairEncoder::Rule::Ranks, /*whole_piece_first=*/true);
  return impl;
}

GPT2Tokenizer GPT2Tokenizer::from_files(const std::filesystem::path& encoder_json,
                                        const std::filesystem::path& vocab_bpe) {
  const json vocab = parse_json(read_file(encoder_json, "encoder.json"), encoder_json);
  const std::string bpe = read_file(vocab_bpe, "vocab.bpe");
  // vocab.bpe: a "#version" line, then one "first second" merge per line, in rank order.
  std::vector<std::pair<std::string, std::string>> merges;
  std::istringstream lines(bpe);
  std::string line;
  if (!std::getline(lines, line) || line.rfind("#version", 0) != 0) {
    not_gpt2(vocab_bpe, "its first line is not '#version: ...'");
  }
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::istringstream words(line);
    std::string first, second, extra;
    if (!(words >> first >> second) || (words >> extra)) {
      not_gpt2(vocab_bpe, "line " + std::to_string(merges.size() + 2) + " is not a merge 'a b'");
    }
    merges.emplace_back(std::move(first), std::move(second));
  }
  return GPT2Tokenizer(Impl::build(merges, vocab, encoder_json, vocab_bpe));
}

GPT2Tokenizer GPT2Tokenizer::from_dir(const std::filesystem::path& dir) {
  return from_files(dir / "encoder.json", dir / "vocab.bpe");
}

GPT2Tokenizer GPT2Tokenizer::from_tokenizer_json(const std::filesystem::path& tokenizer_json) {
  const json file = parse_json(read_file(tokenizer_json, "tokenizer.json"), tokenizer_json);
  const auto merges = detail::hf_bpe_merges(file, tokenizer_json, "GPT2Tokenizer");
  const json* model = &file["model"];
  // GPT-2's tokenizer.json keeps <|endoftext|> both in the vocab and as an added token.
  json vocab = (*model)["vocab"];
  if (file.contains("added_tokens") && file["added_tokens"].is_array()) {
    for (const json& added : file["added_tokens"]) {
      if (added.value("content", "") == kEndOfTextText && added.contains("id")) {
        vocab[std::string(kEndOfTextText)] = added["id"];
      }
    }
  }
  return GPT2Tokenizer(Impl::build(merges, vocab, tokenizer_json, tokenizer_json));
}

std::vector<int64_t> GPT2Tokenizer::encode(std::string_view text) const {
  std::vector<int64_t> ids;
  ids.reserve(text.size() / 3);
  size_t start = 0;
  while (true) {
    const size_t special = text.find(kEndOfTextText, start);
    const size_t end = special == std::string_view::npos ? text.size() : special;
    impl_->bpe->encode(text.substr(start, end - start), start, ids);
    if (special == std::string_view::npos) break;
    ids.push_back(kEndOfText);
    start = special + kEndOfTextText.size();
  }
  return ids;
}

std::vector<int64_t> GPT2Tokenizer::encode_ordinary(std::string_view text) const {
  std::vector<int64_t> ids;
  ids.reserve(text.size() / 3);
  impl_->bpe->encode(text, 0, ids);
  return ids;
}

std::string GPT2Tokenizer::decode(std::span<const int64_t> ids) const {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= kVocabSize) {
      throw Error("GPT2Tokenizer::decode: id " + std::to_string(ids[i]) + " at position " +
                  std::to_string(i) + " is outside [0, 50257)");
    }
    text += ids[i] == kEndOfText ? std::string(kEndOfTextText) : impl_->bpe->bytes(ids[i]);
  }
  return text;
}

std::vector<int64_t> ByteTokenizer::encode(std::string_view text) const {
  std::vector<int64_t> ids(text.size());
  for (size_t i = 0; i < text.size(); ++i) ids[i] = static_cast<unsigned char>(text[i]);
  return ids;
}

std::string ByteTokenizer::decode(std::span<const int64_t> ids) const {
  std::string text(ids.size(), '\0');
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] > 255) {
      throw Error("ByteTokenizer::decode: id " + std::to_string(ids[i]) + " at position " +
                  std::to_string(i) + " is outside [0, 256)");
    }
    text[i] = static_cast<char>(ids[i]);
  }
  return text;
}

std::filesystem::path default_gpt2_vocab_dir() {
  auto env = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    return value ? value : "";
  };
  if (const std::string dir = env("TAPEGRAD_GPT2_DIR"); !dir.empty()) return dir;
  std::filesystem::path cache = env("XDG_CACHE_HOME");
  if (cache.empty()) cache = std::filesystem::path(env("HOME")) / ".cache";
  return cache / "tapegrad" / "gpt2";
}

std::unique_ptr<Tokenizer> make_tokenizer(std::string_view kind,
                                          const std::filesystem::path& gpt2_dir) {
  if (kind == "gpt2") return std::make_unique<GPT2Tokenizer>(GPT2Tokenizer::from_dir(gpt2_dir));
  if (kind == "bytes") return std::make_unique<ByteTokenizer>();
  throw Error("tokenizer: '" + std::string(kind) + "' is not one of gpt2, bytes");
}

}  // namespace tapegrad
