// GPT-2's byte-level BPE tokenizer (PCRE2 pre-tokenizer, tiktoken's merge rule) and the bytes one.
#include <tapegrad/text/tokenizer.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <queue>
#include <sstream>
#include <unordered_map>
#include <utility>

#include <tapegrad/graph/error.h>

namespace tapegrad {

namespace {

using json = nlohmann::json;

// GPT-2's pre-tokenizing pattern in tiktoken's equivalent, faster form. \s is spelled out as the
// Unicode White_Space property (what tiktoken's Rust regex and Python's regex module mean by \s):
// PCRE2's own \s would also match U+180E.
constexpr const char* kWhiteSpace =
    "\\t\\n\\x{0B}\\f\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
    "\\x{202F}\\x{205F}\\x{3000}";

std::string gpt2_pattern() {
  const std::string ws = kWhiteSpace;
  return "'(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+| ?[^" + ws + "\\p{L}\\p{N}]+|[" + ws +
         "]+(?![^" + ws + "])|[" + ws + "]+";
}

constexpr std::string_view kEndOfTextText = "<|endoftext|>";

// Heterogeneous lookup: pieces are string_views into the text, the keys own their bytes.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using RankMap = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

// GPT-2's bytes_to_unicode(): the printable Latin-1 bytes map to themselves, the other 68 bytes
// to U+0100 onwards, so that every token of encoder.json / vocab.bpe is printable text.
// Returns, for each code point below 324, the byte it stands for (-1 when none).
std::array<int, 324> unicode_to_byte() {
  std::array<int, 324> table;
  table.fill(-1);
  auto printable = [](int b) {
    return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
  };
  int n = 0;
  for (int b = 0; b < 256; ++b) {
    if (printable(b)) {
      table[static_cast<size_t>(b)] = b;
    } else {
      table[static_cast<size_t>(256 + n++)] = b;
    }
  }
  return table;
}

// Decodes a byte-level token's text (UTF-8 of code points < 324) into the bytes it stands for;
// std::nullopt when it is not such a text.
std::optional<std::string> token_bytes(std::string_view token) {
  static const std::array<int, 324> table = unicode_to_byte();
  std::string out;
  out.reserve(token.size());
  for (size_t i = 0; i < token.size();) {
    const auto c = static_cast<unsigned char>(token[i]);
    uint32_t cp = 0;
    if (c < 0x80) {
      cp = c;
      i += 1;
    } else if ((c & 0xE0) == 0xC0 && i + 1 < token.size()) {
      cp = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(token[i + 1]) & 0x3Fu);
      i += 2;
    } else {
      return std::nullopt;  // three-byte characters are all >= U+0800, past the table
    }
    if (cp >= table.size() || table[cp] < 0) return std::nullopt;
    out.push_back(static_cast<char>(table[cp]));
  }
  return out;
}

std::string read_file(const std::filesystem::path& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(std::string("GPT2Tokenizer: cannot open the ") + what + " file '" + path.string() +
                "' (bash tools/fetch_gpt2_vocab.sh fetches GPT-2's files)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

json parse_json(const std::string& text, const std::filesystem::path& path) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw Error("GPT2Tokenizer: '" + path.string() + "' is not JSON: " + e.what());
  }
}

[[noreturn]] void not_gpt2(const std::filesystem::path& path, const std::string& why) {
  throw Error("GPT2Tokenizer: '" + path.string() + "' is not GPT-2's vocabulary: " + why);
}

struct Pcre2Deleter {
  void operator()(pcre2_code* code) const { pcre2_code_free(code); }
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};

}  // namespace

struct GPT2Tokenizer::Impl {
  RankMap ranks;                     // token bytes -> id (= BPE rank), the 50256 mergeable tokens
  std::vector<std::string> decoder;  // id -> bytes, all 50257
  std::unique_ptr<pcre2_code, Pcre2Deleter> pattern;

  // Builds the ranks as tiktoken's data_gym_to_mergeable_bpe_ranks does: the 256 single bytes in
  // bytes_to_unicode order, then one id per merge in file order; they must equal `vocab`.
  static std::shared_ptr<const Impl> build(
      const std::vector<std::pair<std::string, std::string>>& merges, const json& vocab,
      const std::filesystem::path& vocab_path, const std::filesystem::path& merges_path);
  static constexpr int32_t kNoRank = std::numeric_limits<int32_t>::max();
  static constexpr size_t kLongPiece = 64;  // bytes; longer pieces merge through bpe_long()
  void bpe(std::string_view piece, std::vector<int64_t>& out) const;
  void bpe_long(std::string_view piece, std::vector<int64_t>& out) const;
  void encode_ordinary(std::string_view text, size_t base, std::vector<int64_t>& out) const;
};

std::shared_ptr<const GPT2Tokenizer::Impl> GPT2Tokenizer::Impl::build(
    const std::vector<std::pair<std::string, std::string>>& merges, const json& vocab,
    const std::filesystem::path& vocab_path, const std::filesystem::path& merges_path) {
  auto impl = std::make_shared<Impl>();
  if (merges.size() + 256 != static_cast<size_t>(kEndOfText)) {
    not_gpt2(merges_path, std::to_string(merges.size()) + " merges, GPT-2 has 50000");
  }
  impl->decoder.resize(static_cast<size_t>(kVocabSize));
  int32_t next = 0;
  auto add = [&](std::string bytes) {
    impl->decoder[static_cast<size_t>(next)] = bytes;
    if (!impl->ranks.emplace(std::move(bytes), next).second) {
      not_gpt2(merges_path, "token " + std::to_string(next) + " repeats an earlier token");
    }
    ++next;
  };
  static const std::array<int, 324> table = unicode_to_byte();
  for (int cp = 0; cp < 324; ++cp) {
    if (cp < 256 && table[static_cast<size_t>(cp)] == cp)
      add(std::string(1, static_cast<char>(cp)));
  }
  for (int cp = 256; cp < 324; ++cp)
    add(std::string(1, static_cast<char>(table[static_cast<size_t>(cp)])));
  for (size_t i = 0; i < merges.size(); ++i) {
    auto first = token_bytes(merges[i].first);
    auto second = token_bytes(merges[i].second);
    if (!first || !second) {
      not_gpt2(merges_path, "merge " + std::to_string(i + 1) + " ('" + merges[i].first + " " +
                                merges[i].second + "') is not byte-level text");
    }
    add(*first + *second);
  }
  impl->decoder[static_cast<size_t>(kEndOfText)] = std::string(kEndOfTextText);

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
    auto bytes = token_bytes(token);
    auto it = bytes ? impl->ranks.find(*bytes) : impl->ranks.end();
    if (it == impl->ranks.end() || it->second != value) {
      not_gpt2(vocab_path, "token '" + token + "' (id " + std::to_string(value) +
                               ") does not match the merges of '" + merges_path.string() + "'");
    }
  }

  int error = 0;
  PCRE2_SIZE error_offset = 0;
  const std::string pattern = gpt2_pattern();
  impl->pattern.reset(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.c_str()), pattern.size(),
                                    PCRE2_UTF | PCRE2_UCP, &error, &error_offset, nullptr));
  if (!impl->pattern) {
    std::array<PCRE2_UCHAR, 256> message{};
    pcre2_get_error_message(error, message.data(), message.size());
    throw Error(std::string("GPT2Tokenizer: PCRE2 cannot compile GPT-2's pattern: ") +
                reinterpret_cast<const char*>(message.data()));
  }
  // JIT when PCRE2 has it (several times faster); the interpreter gives the same matches.
  pcre2_jit_compile(impl->pattern.get(), PCRE2_JIT_COMPLETE);
  return impl;
}

// tiktoken's byte_pair_merge: parts[i] = (start of part i, rank of the token spanning parts i and
// i + 1); repeatedly merge the lowest-ranked such pair, the leftmost of equals. Quadratic in the
// piece's length, so long pieces (a run of 100000 letters is one piece) go to bpe_long().
void GPT2Tokenizer::Impl::bpe(std::string_view piece, std::vector<int64_t>& out) const {
  if (auto whole = ranks.find(piece); whole != ranks.end()) {  // tiktoken's shortcut
    out.push_back(whole->second);
    return;
  }
  if (piece.size() > kLongPiece) {
    bpe_long(piece, out);
    return;
  }
  auto rank_of = [&](size_t begin, size_t end) {
    auto it = ranks.find(piece.substr(begin, end - begin));
    return it == ranks.end() ? kNoRank : it->second;
  };
  std::vector<std::pair<size_t, int32_t>> parts;
  parts.reserve(piece.size() + 1);
  for (size_t i = 0; i + 1 < piece.size(); ++i) parts.emplace_back(i, rank_of(i, i + 2));
  parts.emplace_back(piece.size() - 1, kNoRank);
  parts.emplace_back(piece.size(), kNoRank);
  auto rank_after_merge = [&](size_t i) {  // rank of parts i..i+2 once i+1 is merged away
    return i + 3 < parts.size() ? rank_of(parts[i].first, parts[i + 3].first) : kNoRank;
  };
  while (true) {
    size_t best = 0;
    int32_t best_rank = kNoRank;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      if (parts[i].second < best_rank) {
        best_rank = parts[i].second;
        best = i;
      }
    }
    if (best_rank == kNoRank) break;
    if (best > 0) parts[best - 1].second = rank_after_merge(best - 1);
    parts[best].second = rank_after_merge(best);
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    out.push_back(rank_of(parts[i].first, parts[i + 1].first));  // every byte is a token
  }
}

// The same merges in O(n log n): the parts are a linked list over their start bytes and the
// candidate pairs a min-heap of (rank, start), so the pair taken is again the lowest-ranked,
// leftmost of equals; entries made stale by a merge carry an old version and are skipped.
void GPT2Tokenizer::Impl::bpe_long(std::string_view piece, std::vector<int64_t>& out) const {
  const size_t n = piece.size();
  std::vector<size_t> next(n), prev(n);
  std::vector<uint32_t> version(n, 0);
  std::vector<bool> alive(n, true);
  for (size_t i = 0; i < n; ++i) {
    next[i] = i + 1;  // n: no next part
    prev[i] = i == 0 ? n : i - 1;
  }
  auto end_of = [&](size_t i) { return next[i]; };  // a part ends where the next one starts
  auto pair_rank = [&](size_t i) {                  // rank of part i merged with its next part
    if (next[i] >= n) return kNoRank;
    auto it = ranks.find(piece.substr(i, end_of(next[i]) - i));
    return it == ranks.end() ? kNoRank : it->second;
  };
  struct Candidate {
    int32_t rank;
    size_t start;
    uint32_t version;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : start > o.start;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto push = [&](size_t i) {
    ++version[i];
    const int32_t rank = pair_rank(i);
    if (rank != kNoRank) heap.push({rank, i, version[i]});
  };
  for (size_t i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    const Candidate top = heap.top();
    heap.pop();
    if (!alive[top.start] || version[top.start] != top.version) continue;
    const size_t i = top.start, j = next[i];
    alive[j] = false;
    next[i] = next[j];
    if (next[j] < n) prev[next[j]] = i;
    push(i);
    if (prev[i] < n) push(prev[i]);
  }
  for (size_t i = 0; i < n; i = next[i])
    out.push_back(ranks.find(piece.substr(i, next[i] - i))->second);
}

void GPT2Tokenizer::Impl::encode_ordinary(std::string_view text, size_t base,
                                          std::vector<int64_t>& out) const {
  if (text.empty()) return;
  std::unique_ptr<pcre2_match_data, Pcre2Deleter> match(
      pcre2_match_data_create_from_pattern(pattern.get(), nullptr));
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  uint32_t options = 0;  // the first match checks the whole text is UTF-8, the others need not
  size_t offset = 0;
  while (offset < text.size()) {
    const int rc =
        pcre2_match(pattern.get(), subject, text.size(), offset, options, match.get(), nullptr);
    options = PCRE2_NO_UTF_CHECK;
    if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21) {
      throw Error("GPT2Tokenizer::encode: the text is not valid UTF-8 (at byte " +
                  std::to_string(base + pcre2_get_startchar(match.get())) + ")");
    }
    if (rc == PCRE2_ERROR_NOMATCH) break;  // cannot happen: every character starts a match
    if (rc < 0) {
      std::array<PCRE2_UCHAR, 256> message{};
      pcre2_get_error_message(rc, message.data(), message.size());
      throw Error(std::string("GPT2Tokenizer::encode: PCRE2 failed: ") +
                  reinterpret_cast<const char*>(message.data()));
    }
    const PCRE2_SIZE* range = pcre2_get_ovector_pointer(match.get());
    bpe(text.substr(range[0], range[1] - range[0]), out);
    offset = range[1];
  }
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
  const json* model = file.contains("model") ? &file["model"] : nullptr;
  if (!model || model->value("type", "") != "BPE" || !model->contains("vocab") ||
      !model->contains("merges") || !(*model)["merges"].is_array()) {
    not_gpt2(tokenizer_json, "it has no BPE model with vocab and merges");
  }
  std::vector<std::pair<std::string, std::string>> merges;
  for (const json& merge : (*model)["merges"]) {
    if (merge.is_string()) {  // "a b"
      const std::string text = merge.get<std::string>();
      const size_t space = text.find(' ');
      if (space == std::string::npos) not_gpt2(tokenizer_json, "merge '" + text + "' is not 'a b'");
      merges.emplace_back(text.substr(0, space), text.substr(space + 1));
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
               merge[1].is_string()) {
      merges.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());  // newer files
    } else {
      not_gpt2(tokenizer_json, "a merge is neither 'a b' nor a pair of strings");
    }
  }
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
    impl_->encode_ordinary(text.substr(start, end - start), start, ids);
    if (special == std::string_view::npos) break;
    ids.push_back(kEndOfText);
    start = special + kEndOfTextText.size();
  }
  return ids;
}

std::vector<int64_t> GPT2Tokenizer::encode_ordinary(std::string_view text) const {
  std::vector<int64_t> ids;
  ids.reserve(text.size() / 3);
  impl_->encode_ordinary(text, 0, ids);
  return ids;
}

std::string GPT2Tokenizer::decode(std::span<const int64_t> ids) const {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= kVocabSize) {
      throw Error("GPT2Tokenizer::decode: id " + std::to_string(ids[i]) + " at position " +
                  std::to_string(i) + " is outside [0, 50257)");
    }
    text += impl_->decoder[static_cast<size_t>(ids[i])];
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
