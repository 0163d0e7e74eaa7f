// Qwen3's and Llama 3's tokenizers (text/llm_tokenizers.h) on the byte-level BPE core.
#include <tapegrad/text/llm_tokenizers.h>

#include <utf8proc.h>

#include <array>
#include <cstdlib>
#include <sstream>
#include <unordered_map>
#include <utility>

#include <tapegrad/graph/error.h>
#include <tapegrad/text/byte_level_bpe.h>
#include <tapegrad/text/tokenizer_files.h>

namespace tapegrad {

namespace {

using json = nlohmann::json;
using detail::BytePairEncoder;

constexpr std::string_view kFetchHint =
    "bash tools/fetch_tokenizers.sh fetches Qwen3's and Llama 3's";

// The book's Llama3Tokenizer pattern (tiktoken's cl100k form, numbers in runs of up to three).
constexpr std::string_view kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// The special tokens the book's Qwen3Tokenizer knows (its _SPECIALS).
constexpr std::array<std::string_view, 16> kQwen3BookSpecials = {
    "<|endoftext|>",      "<|im_start|>",     "<|im_end|>",     "<|object_ref_start|>",
    "<|object_ref_end|>", "<|box_start|>",    "<|box_end|>",    "<|quad_start|>",
    "<|quad_end|>",       "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>",
    "<|image_pad|>",      "<|video_pad|>",    "<think>",        "</think>"};

// Python's str.isspace() for one code point (what the book's text.strip() removes): the
// White_Space characters and the four information separators U+001C..U+001F.
bool python_space(utf8proc_int32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// The text without the leading and trailing characters Python's str.strip() removes. Invalid
// UTF-8 stops the stripping where it starts (the encoder reports it).
std::string_view python_strip(std::string_view text) {
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  size_t begin = 0;
  while (begin < text.size()) {
    utf8proc_int32_t c = 0;
    const auto n =
        utf8proc_iterate(bytes + begin, static_cast<utf8proc_ssize_t>(text.size() - begin), &c);
    if (n <= 0 || !python_space(c)) break;
    begin += static_cast<size_t>(n);
  }
  size_t end = begin;  // the end of the last character that is not a space
  for (size_t i = begin; i < text.size();) {
    utf8proc_int32_t c = 0;
    const auto n = utf8proc_iterate(bytes + i, static_cast<utf8proc_ssize_t>(text.size() - i), &c);
    if (n <= 0) return text.substr(begin);
    i += static_cast<size_t>(n);
    if (!python_space(c)) end = i;
  }
  return text.substr(begin, end - begin);
}

[[noreturn]] void not_valid_utf8(std::string_view who, std::string_view text, size_t base) {
  size_t at = 0;
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  while (at < text.size()) {
    utf8proc_int32_t c = 0;
    const auto n =
        utf8proc_iterate(bytes + at, static_cast<utf8proc_ssize_t>(text.size() - at), &c);
    if (n <= 0) break;
    at += static_cast<size_t>(n);
  }
  throw Error(std::string(who) + "::encode: the text is not valid UTF-8 (at byte " +
              std::to_string(base + at) + ")");
}

// Unicode's canonical composition (NFC), as Qwen3's tokenizer.json asks of its normalizer.
std::string nfc(std::string_view text, size_t base) {
  bool ascii = true;
  for (char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) return std::string(text);  // ASCII is its own NFC
  utf8proc_uint8_t* out = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                              static_cast<utf8proc_ssize_t>(text.size()), &out,
                              static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (n < 0) not_valid_utf8("Qwen3Tokenizer", text, base);
  std::string result(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
  std::free(out);
  return result;
}

// The mergeable tokens of a Hugging Face BPE vocab whose ids are 0..n-1: id -> bytes.
std::vector<std::string> vocab_tokens(const json& vocab, const std::filesystem::path& path,
                                      std::string_view who) {
  std::vector<std::string> tokens(vocab.size());
  std::vector<bool> seen(vocab.size(), false);
  for (const auto& [token, id] : vocab.items()) {
    const int64_t value = id.is_number_integer() ? id.get<int64_t>() : -1;
    auto bytes = detail::byte_level_bytes(token);
    if (value < 0 || value >= static_cast<int64_t>(tokens.size()) ||
        seen[static_cast<size_t>(value)] || !bytes) {
      throw Error(std::string(who) + ": '" + path.string() + "' has a vocab entry '" + token +
                  "' that is not a byte-level token with an id below " +
                  std::to_string(tokens.size()) + " of its own");
    }
    seen[static_cast<size_t>(value)] = true;
    tokens[static_cast<size_t>(value)] = std::move(*bytes);
  }
  return tokens;
}

// The leftmost, then longest, of `tokens` found in `text` from `from`: (position, index), or
// (npos, 0).
std::pair<size_t, size_t> find_token(std::string_view text, size_t from,
                                     const std::vector<std::pair<std::string, int64_t>>& tokens) {
  for (size_t at = text.find('<', from); at != std::string_view::npos;
       at = text.find('<', at + 1)) {
    size_t best = tokens.size(), best_size = 0;
    for (size_t t = 0; t < tokens.size(); ++t) {
      const std::string& token = tokens[t].first;
      if (token.size() > best_size && text.compare(at, token.size(), token) == 0) {
        best = t;
        best_size = token.size();
      }
    }
    if (best < tokens.size()) return {at, best};
  }
  return {std::string_view::npos, 0};
}

// The book's `<\|[^>]+?\|>` at `at`: "<|", one or more characters other than '>', and the first
// "|>" after them; the match's size, or 0.
size_t book_special_span(std::string_view text, size_t at) {
  if (text.compare(at, 2, "<|") != 0) return 0;
  for (size_t end = at + 3; end < text.size() && text[end - 1] != '>'; ++end) {
    if (text.compare(end, 2, "|>") == 0) return end + 2 - at;
  }
  return 0;
}

std::filesystem::path env_path(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

// --- Qwen3 ------------------------------------------------------------------------------------

struct Qwen3Tokenizer::Impl {
  std::unique_ptr<const BytePairEncoder> bpe;
  // Every added token (all start with '<' and match the raw text, as Qwen3's file marks them).
  std::vector<std::pair<std::string, int64_t>> added;
  std::unordered_map<std::string, int64_t> book_specials;  // the book's, where the file has them
  bool normalize_nfc = false;
  int64_t n_vocab = 0;

  // Hugging Face's encode: the added tokens split off, each other span NFC, regex, BPE.
  void encode_hf(std::string_view text, std::vector<int64_t>& out) const {
    size_t start = 0;
    while (start <= text.size()) {
      const auto [at, which] = find_token(text, start, added);
      const size_t end = at == std::string_view::npos ? text.size() : at;
      if (end > start) {
        const std::string_view span = text.substr(start, end - start);
        if (normalize_nfc) {
          bpe->encode(nfc(span, start), start, out);
        } else {
          bpe->encode(span, start, out);
        }
      }
      if (at == std::string_view::npos) break;
      out.push_back(added[which].second);
      start = at + added[which].first.size();
    }
  }
};

Qwen3Tokenizer Qwen3Tokenizer::from_file(const std::filesystem::path& tokenizer_json) {
  constexpr std::string_view who = "Qwen3Tokenizer";
  const json file = detail::parse_tokenizer_json(
      detail::read_tokenizer_file(tokenizer_json, who, "tokenizer.json", kFetchHint),
      tokenizer_json, who);
  const auto merge_texts = detail::hf_bpe_merges(file, tokenizer_json, who);
  auto not_qwen3 = [&](const std::string& why) {
    throw Error(std::string(who) + ": '" + tokenizer_json.string() +
                "' is not Qwen3's tokenizer.json: " + why);
  };
  const json& model = file["model"];
  if (model.value("byte_fallback", false)) not_qwen3("its BPE model falls back to bytes");
  std::string pattern;
  const json* pre = file.contains("pre_tokenizer") ? &file["pre_tokenizer"] : nullptr;
  if (pre && pre->is_object() && pre->value("type", "") == "Sequence") {
    for (const json& step : (*pre)["pretokenizers"]) {
      if (step.value("type", "") == "Split" && step.contains("pattern") &&
          step["pattern"].contains("Regex")) {
        pattern = step["pattern"]["Regex"].get<std::string>();
      }
    }
  }
  if (pattern.empty()) not_qwen3("its pre-tokenizer has no Split regex");

  auto impl = std::make_shared<Impl>();
  std::vector<std::string> tokens = vocab_tokens(model["vocab"], tokenizer_json, who);
  std::unordered_map<std::string, int32_t> ids;
  ids.reserve(model["vocab"].size());
  for (const auto& [token, id] : model["vocab"].items()) ids.emplace(token, id.get<int32_t>());
  std::vector<std::pair<int32_t, int32_t>> merges;
  merges.reserve(merge_texts.size());
  for (const auto& [left, right] : merge_texts) {
    auto l = ids.find(left), r = ids.find(right);
    if (l == ids.end() || r == ids.end())
      not_qwen3("merge '" + left + " " + right + "' names no token");
    merges.emplace_back(l->second, r->second);
  }
  impl->n_vocab = static_cast<int64_t>(tokens.size());
  if (file.contains("added_tokens") && file["added_tokens"].is_array()) {
    for (const json& added : file["added_tokens"]) {
      const std::string content = added.value("content", "");
      const int64_t id = added.value("id", int64_t{-1});
      if (content.empty() || content[0] != '<' || id < 0 || added.value("normalized", true) ||
          added.value("lstrip", false) || added.value("rstrip", false) ||
          added.value("single_word", false)) {
        not_qwen3("the added token '" + content + "' is not one of Qwen3's kind");
      }
      impl->added.emplace_back(content, id);
      impl->n_vocab = std::max(impl->n_vocab, id + 1);
    }
  }
  for (std::string_view special : kQwen3BookSpecials) {
    for (const auto& [content, id] : impl->added) {
      if (content == special) impl->book_specials.emplace(content, id);
    }
  }
  if (!impl->book_specials.contains("<|im_start|>") ||
      !impl->book_specials.contains("<|endoftext|>")) {
    not_qwen3("it has no <|im_start|> or <|endoftext|> added token");
  }
  const json* normalizer = file.contains("normalizer") ? &file["normalizer"] : nullptr;
  if (normalizer && !normalizer->is_null()) {
    if (normalizer->value("type", "") != "NFC") not_qwen3("its normalizer is not NFC");
    impl->normalize_nfc = true;
  }
  impl->bpe = std::make_unique<BytePairEncoder>(
      std::string(who), std::move(tokens), merges, pattern, BytePairEncoder::Rule::Merges,
      /*whole_piece_first=*/model.value("ignore_merges", false));
  return Qwen3Tokenizer(std::move(impl));
}

std::vector<int64_t> Qwen3Tokenizer::encode_hf(std::string_view text) const {
  std::vector<int64_t> ids;
  impl_->encode_hf(text, ids);
  return ids;
}

std::vector<int64_t> Qwen3Tokenizer::encode(std::string_view text) const {
  const std::string_view stripped = python_strip(text);
  if (auto it = impl_->book_specials.find(std::string(stripped));
      it != impl_->book_specials.end()) {
    return {it->second};
  }
  // The book's re.split(r"(<\|[^>]+?\|>|<think>|</think>)", text), its parts encoded alone.
  std::vector<int64_t> ids;
  size_t start = 0;
  auto flush = [&](size_t end) {
    if (end > start) impl_->encode_hf(text.substr(start, end - start), ids);
  };
  for (size_t at = text.find('<'); at != std::string_view::npos; at = text.find('<', at)) {
    size_t size = book_special_span(text, at);
    if (size == 0 && text.compare(at, 7, "<think>") == 0) size = 7;
    if (size == 0 && text.compare(at, 8, "</think>") == 0) size = 8;
    if (size == 0) {
      ++at;
      continue;
    }
    flush(at);
    const std::string part(text.substr(at, size));
    if (auto it = impl_->book_specials.find(part); it != impl_->book_specials.end()) {
      ids.push_back(it->second);
    } else {
      impl_->encode_hf(part, ids);
    }
    start = at = at + size;
  }
  flush(text.size());
  return ids;
}

std::vector<int64_t> Qwen3Tokenizer::encode_chat(std::string_view user_message,
                                                 ChatOptions options) const {
  std::string text = "<|im_start|>user\n" + std::string(user_message) + "<|im_end|>\n";
  if (options.add_generation_prompt) {
    text += "<|im_start|>assistant";
    text += options.add_thinking ? "\n" : "\n<think>\n\n</think>\n\n";
  }
  // The book wraps, then encodes as above; only its one-special-token shortcut looks at the
  // unwrapped text.
  if (auto it = impl_->book_specials.find(std::string(python_strip(user_message)));
      it != impl_->book_specials.end()) {
    return {it->second};
  }
  return encode(text);
}

std::string Qwen3Tokenizer::decode(std::span<const int64_t> ids) const {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t id = ids[i];
    if (id >= 0 && id < impl_->bpe->size()) {
      text += impl_->bpe->bytes(id);
      continue;
    }
    bool found = false;
    for (const auto& [content, added_id] : impl_->added) {
      if (added_id == id) {
        text += content;
        found = true;
        break;
      }
    }
    if (!found) {
      throw Error("Qwen3Tokenizer::decode: id " + std::to_string(id) + " at position " +
                  std::to_string(i) + " is no token (the vocabulary has " +
                  std::to_string(impl_->n_vocab) + " ids)");
    }
  }
  return text;
}

int64_t Qwen3Tokenizer::n_vocab() const {
  return impl_->n_vocab;
}

std::optional<int64_t> Qwen3Tokenizer::eot_token() const {
  return token_id("<|endoftext|>");
}

int64_t Qwen3Tokenizer::token_id(std::string_view added_token) const {
  for (const auto& [content, id] : impl_->added) {
    if (content == added_token) return id;
  }
  throw Error("Qwen3Tokenizer: '" + std::string(added_token) + "' is no added token");
}

int64_t Qwen3Tokenizer::eos_token_id(bool base_model) const {
  return token_id(base_model ? "<|endoftext|>" : "<|im_end|>");
}

// --- Llama 3 ----------------------------------------------------------------------------------

struct Llama3Tokenizer::Impl {
  std::unique_ptr<const BytePairEncoder> bpe;  // the 128,000 ranks
  // The book's special tokens, in its dict's order: name and id.
  std::vector<std::pair<std::string, int64_t>> specials;
  std::unordered_map<int64_t, std::string> special_names;
};

namespace {

constexpr int64_t kLlama3Ranks = 128000;

// One base64 word of tiktoken's file -> its bytes; nullopt when it is not base64.
std::optional<std::string> base64_decode(std::string_view word) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  while (!word.empty() && word.back() == '=') word.remove_suffix(1);
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : word) {
    const int v = value(c);
    if (v < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xFF));
    }
  }
  return out;
}

}  // namespace

Llama3Tokenizer Llama3Tokenizer::from_file(const std::filesystem::path& path) {
  constexpr std::string_view who = "Llama3Tokenizer";
  const std::string content = detail::read_tokenizer_file(path, who, "tokenizer", kFetchHint);
  auto not_llama3 = [&](const std::string& why) {
    throw Error(std::string(who) + ": '" + path.string() + "' is not Llama 3's tokenizer: " + why);
  };
  std::vector<std::string> tokens;
  const size_t first = content.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && content[first] == '{') {  // Hugging Face's tokenizer.json
    const json file = detail::parse_tokenizer_json(content, path, who);
    detail::hf_bpe_merges(file, path, who);  // checks the model is BPE; the ranks are its ids
    tokens = vocab_tokens(file["model"]["vocab"], path, who);
  } else {  // tiktoken's format, Meta's tokenizer.model: "<base64 token> <rank>" a line
    std::istringstream lines(content);
    std::string line;
    size_t number = 0;
    while (std::getline(lines, line)) {
      ++number;
      if (line.empty()) continue;
      std::istringstream words(line);
      std::string word, extra;
      int64_t rank = -1;
      auto bytes =
          (words >> word >> rank) && !(words >> extra) ? base64_decode(word) : std::nullopt;
      if (!bytes || rank != static_cast<int64_t>(tokens.size())) {
        not_llama3("line " + std::to_string(number) + " is not '<base64 token> " +
                   std::to_string(tokens.size()) + "'");
      }
      tokens.push_back(std::move(*bytes));
    }
  }
  if (static_cast<int64_t>(tokens.size()) != kLlama3Ranks) {
    not_llama3(std::to_string(tokens.size()) + " ranks, Llama 3 has 128000");
  }
  auto impl = std::make_shared<Impl>();
  impl->specials = {{"<|begin_of_text|>", kBeginOfText},
                    {"<|end_of_text|>", kEndOfText},
                    {"<|start_header_id|>", kStartHeader},
                    {"<|end_header_id|>", kEndHeader},
                    {"<|eot_id|>", kEndOfTurn}};
  // The book's reserved names: <|reserved_i|> is 128002 + i unless a named token has that id,
  // so its last two (<|reserved_254|>, <|reserved_255|>) lie past the model's 128,256 ids.
  for (int64_t i = 0; i < 256; ++i) {
    const int64_t id = 128002 + i;
    if (id == kStartHeader || id == kEndHeader || id == kEndOfTurn) continue;
    impl->specials.emplace_back("<|reserved_" + std::to_string(i) + "|>", id);
  }
  for (const auto& [name, id] : impl->specials) impl->special_names.emplace(id, name);
  impl->bpe = std::make_unique<BytePairEncoder>(std::string(who), std::move(tokens),
                                                std::vector<std::pair<int32_t, int32_t>>{},
                                                kLlama3Pattern, BytePairEncoder::Rule::Ranks,
                                                /*whole_piece_first=*/true);
  return Llama3Tokenizer(std::move(impl));
}

std::vector<int64_t> Llama3Tokenizer::encode(std::string_view text) const {
  return encode(text, EncodeOptions{});
}

std::vector<int64_t> Llama3Tokenizer::encode(std::string_view text, EncodeOptions options) const {
  std::vector<int64_t> ids;
  if (options.bos) ids.push_back(kBeginOfText);
  size_t start = 0;
  while (options.allow_special) {
    const auto [at, which] = find_token(text, start, impl_->specials);
    if (at == std::string_view::npos) break;
    impl_->bpe->encode(text.substr(start, at - start), start, ids);
    ids.push_back(impl_->specials[which].second);
    start = at + impl_->specials[which].first.size();
  }
  impl_->bpe->encode(text.substr(start), start, ids);
  if (options.eos) ids.push_back(kEndOfText);
  return ids;
}

std::vector<int64_t> Llama3Tokenizer::encode_chat(std::string_view user_message) const {
  std::vector<int64_t> ids = {kStartHeader};
  auto append = [&](std::string_view text) {
    const auto part = encode(text);
    ids.insert(ids.end(), part.begin(), part.end());
  };
  append("user");
  ids.push_back(kEndHeader);
  append("\n\n");
  append(python_strip(user_message));
  ids.push_back(kEndOfTurn);
  return ids;
}

std::string Llama3Tokenizer::decode(std::span<const int64_t> ids) const {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t id = ids[i];
    if (id >= 0 && id < kLlama3Ranks) {
      text += impl_->bpe->bytes(id);
    } else if (auto it = impl_->special_names.find(id); it != impl_->special_names.end()) {
      text += it->second;
    } else {
      throw Error("Llama3Tokenizer::decode: id " + std::to_string(id) + " at position " +
                  std::to_string(i) + " is no token");
    }
  }
  return text;
}

std::filesystem::path default_tokenizer_file(std::string_view model) {
  std::filesystem::path dir = env_path("TAPEGRAD_TOKENIZERS_DIR");
  if (dir.empty()) {
    std::filesystem::path cache = env_path("XDG_CACHE_HOME");
    if (cache.empty()) cache = env_path("HOME") / ".cache";
    dir = cache / "tapegrad";
  }
  return dir / std::string(model) / "tokenizer.json";
}

}  // namespace tapegrad
