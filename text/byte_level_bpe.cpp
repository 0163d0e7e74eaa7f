// Byte-level BPE (text/byte_level_bpe.h): PCRE2 splits the text, tiktoken's or Hugging Face's
// merge rule joins each piece's bytes into tokens.
#include <tapegrad/text/byte_level_bpe.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>
#include <functional>
#include <queue>

#include <tapegrad/graph/error.h>

namespace tapegrad::detail {

namespace {

// GPT-2's bytes_to_unicode(): the printable Latin-1 bytes map to themselves, the other 68 bytes
// to U+0100 onwards, so that every byte-level token is printable text. Returns, for each code
// point below 324, the byte it stands for (-1 when none).
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

// The Unicode White_Space property, as a class body.
constexpr std::string_view kWhiteSpace =
    "\\t\\n\\x{0B}\\f\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
    "\\x{202F}\\x{205F}\\x{3000}";

}  // namespace

std::optional<std::string> byte_level_bytes(std::string_view token) {
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

std::string pattern_with_unicode_whitespace(std::string_view pattern) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[++i];
      if (next == 's') {
        out += in_class ? std::string(kWhiteSpace) : "[" + std::string(kWhiteSpace) + "]";
      } else if (next == 'S' && !in_class) {
        out += "[^" + std::string(kWhiteSpace) + "]";
      } else {
        out += c;
        out += next;  // \S inside a class has no such rewrite; none of the patterns has one
      }
      continue;
    }
    if (c == '[' && !in_class)
      in_class = true;
    else if (c == ']' && in_class)
      in_class = false;
    out += c;
  }
  return out;
}

struct BytePairEncoder::Pattern {
  struct Deleter {
    void operator()(pcre2_code* code) const { pcre2_code_free(code); }
    void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
  };
  std::unique_ptr<pcre2_code, Deleter> code;
};

BytePairEncoder::BytePairEncoder(std::string who, std::vector<std::string> tokens,
                                 const std::vector<std::pair<int32_t, int32_t>>& merges,
                                 std::string_view pattern, Rule rule, bool whole_piece_first)
    : who_(std::move(who)),
      tokens_(std::move(tokens)),
      rule_(rule),
      whole_piece_first_(whole_piece_first),
      pattern_(std::make_unique<Pattern>()) {
  ranks_.reserve(tokens_.size());
  for (size_t id = 0; id < tokens_.size(); ++id) {
    if (!ranks_.emplace(tokens_[id], static_cast<int32_t>(id)).second) {
      throw Error(who_ + ": token " + std::to_string(id) + " repeats token " +
                  std::to_string(ranks_.at(tokens_[id])));
    }
  }
  for (int b = 0; b < 256; ++b) {
    if (!ranks_.contains(std::string(1, static_cast<char>(b)))) {
      throw Error(who_ + ": byte " + std::to_string(b) + " is no token, so not every text encodes");
    }
  }
  merges_.reserve(merges.size());
  const auto n = static_cast<int32_t>(tokens_.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto [left, right] = merges[rank];
    if (left < 0 || right < 0 || left >= n || right >= n) {
      throw Error(who_ + ": merge " + std::to_string(rank) + " names an id outside the vocabulary");
    }
    auto joined = find(tokens_[static_cast<size_t>(left)] + tokens_[static_cast<size_t>(right)]);
    if (!joined) {
      throw Error(who_ + ": merge " + std::to_string(rank) + " joins into no token");
    }
    // A pair listed twice keeps its first (highest-priority) place, as Hugging Face's does.
    merges_.emplace((static_cast<uint64_t>(left) << 32) | static_cast<uint32_t>(right),
                    Merge{static_cast<int32_t>(rank), *joined});
  }

  const std::string spelled = pattern_with_unicode_whitespace(pattern);
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  pattern_->code.reset(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(spelled.c_str()), spelled.size(),
                                     PCRE2_UTF | PCRE2_UCP, &error, &error_offset, nullptr));
  if (!pattern_->code) {
    std::array<PCRE2_UCHAR, 256> message{};
    pcre2_get_error_message(error, message.data(), message.size());
    throw Error(who_ + ": PCRE2 cannot compile the pre-tokenizing pattern: " +
                reinterpret_cast<const char*>(message.data()));
  }
  // JIT when PCRE2 has it (several times faster); the interpreter gives the same matches.
  pcre2_jit_compile(pattern_->code.get(), PCRE2_JIT_COMPLETE);
}

BytePairEncoder::~BytePairEncoder() = default;

std::optional<int32_t> BytePairEncoder::find(std::string_view bytes) const {
  auto it = ranks_.find(bytes);
  if (it == ranks_.end()) return std::nullopt;
  return it->second;
}

// The merge of the adjacent parts [start, mid) (id `left`) and [mid, end) (id `right`): its
// priority and the token it makes, or kNoRank.
BytePairEncoder::Merge BytePairEncoder::pair(std::string_view piece, size_t start, size_t end,
                                             int32_t left, int32_t right) const {
  if (rule_ == Rule::Ranks) {
    auto it = ranks_.find(piece.substr(start, end - start));
    return it == ranks_.end() ? Merge{kNoRank, -1} : Merge{it->second, it->second};
  }
  auto it = merges_.find((static_cast<uint64_t>(left) << 32) | static_cast<uint32_t>(right));
  return it == merges_.end() ? Merge{kNoRank, -1} : it->second;
}

void BytePairEncoder::bpe(std::string_view piece, std::vector<int64_t>& out) const {
  if (piece.empty()) return;
  if (whole_piece_first_) {
    if (auto whole = ranks_.find(piece); whole != ranks_.end()) {
      out.push_back(whole->second);
      return;
    }
  }
  if (rule_ == Rule::Ranks && piece.size() <= kLongPiece) {
    bpe_short(piece, out);
  } else {
    merge_heap(piece, out);
  }
}

// tiktoken's byte_pair_merge: parts[i] = (start of part i, rank of the token spanning parts i and
// i + 1); repeatedly merge the lowest-ranked such pair, the leftmost of equals. Quadratic in the
// piece's length, so long pieces (a run of 100000 letters is one piece) go to merge_heap().
void BytePairEncoder::bpe_short(std::string_view piece, std::vector<int64_t>& out) const {
  auto rank_of = [&](size_t begin, size_t end) {
    auto it = ranks_.find(piece.substr(begin, end - begin));
    return it == ranks_.end() ? kNoRank : it->second;
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

// The merges in O(n log n), by either rule: the parts are a linked list over their start bytes
// and the candidate pairs a min-heap of (priority, start), so the pair taken is the first by the
// rule, leftmost of equals (as tiktoken's loop and Hugging Face's Word::merge_all take it);
// entries made stale by a merge carry an old version and are skipped.
void BytePairEncoder::merge_heap(std::string_view piece, std::vector<int64_t>& out) const {
  const size_t n = piece.size();
  std::vector<size_t> next(n), prev(n);
  std::vector<int32_t> id(n);
  std::vector<uint32_t> version(n, 0);
  std::vector<bool> alive(n, true);
  for (size_t i = 0; i < n; ++i) {
    next[i] = i + 1;  // n: no next part
    prev[i] = i == 0 ? n : i - 1;
    id[i] = ranks_.find(piece.substr(i, 1))->second;  // every byte is a token
  }
  struct Candidate {
    int32_t rank;
    size_t start;
    uint32_t version;
    int32_t id;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : start > o.start;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto push = [&](size_t i) {  // the candidate merge of part i with its next part
    ++version[i];
    if (next[i] >= n) return;
    const size_t j = next[i];
    const Merge merge = pair(piece, i, next[j], id[i], id[j]);
    if (merge.rank != kNoRank) heap.push({merge.rank, i, version[i], merge.id});
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
    id[i] = top.id;
    push(i);
    if (prev[i] < n) push(prev[i]);
  }
  for (size_t i = 0; i < n; i = next[i]) out.push_back(id[i]);
}

void BytePairEncoder::encode(std::string_view text, size_t base, std::vector<int64_t>& out) const {
  if (text.empty()) return;
  std::unique_ptr<pcre2_match_data, Pattern::Deleter> match(
      pcre2_match_data_create_from_pattern(pattern_->code.get(), nullptr));
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  uint32_t options = 0;  // the first match checks the whole text is UTF-8, the others need not
  size_t offset = 0;
  while (offset < text.size()) {
    const int rc = pcre2_match(pattern_->code.get(), subject, text.size(), offset, options,
                               match.get(), nullptr);
    options = PCRE2_NO_UTF_CHECK;
    if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21) {
      throw Error(who_ + "::encode: the text is not valid UTF-8 (at byte " +
                  std::to_string(base + pcre2_get_startchar(match.get())) + ")");
    }
    if (rc == PCRE2_ERROR_NOMATCH) break;  // cannot happen: every character starts a match
    if (rc < 0) {
      std::array<PCRE2_UCHAR, 256> message{};
      pcre2_get_error_message(rc, message.data(), message.size());
      throw Error(who_ +
                  "::encode: PCRE2 failed: " + reinterpret_cast<const char*>(message.data()));
    }
    const PCRE2_SIZE* range = pcre2_get_ovector_pointer(match.get());
    bpe(text.substr(range[0], range[1] - range[0]), out);
    offset = range[1];
  }
}

}  // namespace tapegrad::detail
